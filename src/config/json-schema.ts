// The JSON Schema of the config file, generated from the same zod schema that validates it, so
// an editor (yaml-language-server) checks exactly what `autoclaim check` checks for shape.
import { z } from 'zod';
import type { Path } from './positions.js';
import { ConfigSchema } from './schema.js';

export type JsonSchema = Record<string, unknown>;

export function configJsonSchema(): JsonSchema {
  // "input": defaults make a key optional for the operator, which is what an editor should say.
  return z.toJSONSchema(ConfigSchema, { io: 'input', target: 'draft-2020-12' });
}

/** The keys a map at `path` accepts (for "did you mean" hints); empty when unknown. */
export function allowedKeysAt(schema: JsonSchema, path: Path): string[] {
  let nodes: JsonSchema[] = [schema];
  for (const seg of path) {
    nodes = nodes.flatMap(expand).flatMap((n) => {
      if (typeof seg === 'number') return isSchema(n.items) ? [n.items] : [];
      const props = n.properties;
      const child = isSchema(props) ? props[seg] : undefined;
      return isSchema(child) ? [child] : [];
    });
  }
  const keys = new Set<string>();
  for (const n of nodes.flatMap(expand)) {
    if (isSchema(n.properties)) for (const k of Object.keys(n.properties)) keys.add(k);
  }
  return [...keys];
}

function expand(n: JsonSchema): JsonSchema[] {
  const alternatives = [n.anyOf, n.oneOf, n.allOf].flatMap((a) => (Array.isArray(a) ? a.filter(isSchema) : []));
  return [n, ...alternatives.flatMap(expand)];
}

function isSchema(v: unknown): v is JsonSchema {
  return v !== null && typeof v === 'object' && !Array.isArray(v);
}
