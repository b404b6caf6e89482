// The YAML composer recurses once per nesting level. Deep enough nesting exhausts the stack, and
// V8 can then die with a fatal out-of-memory error inside a regular expression instead of
// throwing something catchable. So nesting is measured before composing, with yaml's own lexer,
// which is an iterative state machine and knows quotes and comments from brackets.
import { CST, Lexer } from 'yaml';

/** Flow collections ([ and {) open at once. */
const MAX_FLOW_DEPTH = 64;
/** Indentation columns plus block indicators (- ? :) on one line: an upper bound of block depth. */
const MAX_BLOCK_DEPTH = 256;

/** The 1-based line on which the text first nests too deep, or undefined when it never does. */
export function tooDeepAt(text: string): number | undefined {
  let line = 1;
  let flow = 0;
  let block = 0;
  let scalarNext = false;
  for (const token of new Lexer().lex(text)) {
    if (scalarNext) {
      // A scalar's text is one token, multi-line or not: count its line breaks, nothing else.
      line += countNewlines(token);
      scalarNext = false;
      continue;
    }
    if (token === CST.SCALAR) {
      scalarNext = true;
      continue;
    }
    switch (CST.tokenType(token)) {
      case 'newline':
        line++;
        block = 0;
        break;
      case 'space':
        block += token.length;
        break;
      case 'seq-item-ind':
      case 'explicit-key-ind':
      case 'map-value-ind':
        block++;
        break;
      case 'flow-map-start':
      case 'flow-seq-start':
        flow++;
        break;
      case 'flow-map-end':
      case 'flow-seq-end':
        if (flow > 0) flow--;
        break;
      default:
        line += countNewlines(token);
    }
    if (flow > MAX_FLOW_DEPTH || block > MAX_BLOCK_DEPTH) return line;
  }
  return undefined;
}

function countNewlines(s: string): number {
  let n = 0;
  for (let i = s.indexOf('\n'); i >= 0; i = s.indexOf('\n', i + 1)) n++;
  return n;
}
