// A local ESLint rule: no import cycle among the files of src/ (issue 14). The community plugin
// (eslint-plugin-import-x) needs native resolver bindings for every platform in the lock file,
// which this project's registry does not carry, so the graph is built here with the TypeScript
// compiler that typechecks the project. Value imports, re-exports and dynamic import() count;
// `import type` does not (it is erased and cannot make a module wait on another).
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import process from 'node:process';
import ts from 'typescript';

/** Relative specifiers of a file's value imports ('./x.js' → the .ts file it names). */
function valueImports(file) {
  const source = ts.createSourceFile(file, readFileSync(file, 'utf8'), ts.ScriptTarget.Latest, true);
  const out = [];
  const add = (spec) => {
    if (!spec.startsWith('.')) return;
    out.push(resolve(dirname(file), spec.replace(/\.js$/, '.ts')));
  };
  const visit = (node) => {
    if (ts.isImportDeclaration(node) && ts.isStringLiteral(node.moduleSpecifier)) {
      const clause = node.importClause;
      const typeOnly = clause !== undefined && (clause.isTypeOnly || (clause.name === undefined && clause.namedBindings !== undefined && ts.isNamedImports(clause.namedBindings) && clause.namedBindings.elements.length > 0 && clause.namedBindings.elements.every((e) => e.isTypeOnly)));
      if (!typeOnly) add(node.moduleSpecifier.text);
    } else if (ts.isExportDeclaration(node) && node.moduleSpecifier !== undefined && ts.isStringLiteral(node.moduleSpecifier)) {
      if (!node.isTypeOnly) add(node.moduleSpecifier.text);
    } else if (ts.isCallExpression(node) && node.expression.kind === ts.SyntaxKind.ImportKeyword) {
      const [arg] = node.arguments;
      if (arg !== undefined && ts.isStringLiteral(arg)) add(arg.text);
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return out;
}

function tsFiles(dir) {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const p = join(dir, e.name);
    if (e.isDirectory()) return tsFiles(p);
    return e.name.endsWith('.ts') && !e.name.endsWith('.d.ts') ? [p] : [];
  });
}

/** Every cycle of the graph (its strongly connected components of more than one file, or a self-import). */
export function findCycles(root) {
  const files = tsFiles(root);
  const known = new Set(files);
  const edges = new Map(files.map((f) => [f, valueImports(f).filter((t) => known.has(t))]));
  // Tarjan's strongly connected components.
  let index = 0;
  const idx = new Map();
  const low = new Map();
  const stack = [];
  const on = new Set();
  const cycles = [];
  const strong = (v) => {
    idx.set(v, index);
    low.set(v, index);
    index++;
    stack.push(v);
    on.add(v);
    for (const w of edges.get(v) ?? []) {
      if (!idx.has(w)) {
        strong(w);
        low.set(v, Math.min(low.get(v), low.get(w)));
      } else if (on.has(w)) low.set(v, Math.min(low.get(v), idx.get(w)));
    }
    if (low.get(v) === idx.get(v)) {
      const comp = [];
      let w;
      do {
        w = stack.pop();
        on.delete(w);
        comp.push(w);
      } while (w !== v);
      if (comp.length > 1 || (edges.get(v) ?? []).includes(v)) cycles.push(comp.sort());
    }
  };
  for (const f of files) if (!idx.has(f)) strong(f);
  return cycles;
}

let cached;
export default {
  meta: { type: 'problem', docs: { description: 'no import cycle among the files of src/' }, schema: [] },
  create(context) {
    return {
      'Program:exit'(node) {
        const file = resolve(context.filename);
        const root = resolve(context.cwd ?? process.cwd(), 'src');
        cached ??= findCycles(root);
        const cycle = cached.find((c) => c.includes(file));
        if (cycle !== undefined) {
          context.report({ node, message: `import cycle: ${cycle.map((f) => relative(root, f)).join(' ⇄ ')}` });
        }
      },
    };
  },
};
