// The JSON Schema of each kind of configuration file, made from the same zod schemas that check the
// files (and the API requests): `npm run docs:config-files` writes them to docs/config-files/, where
// editors can point at them with "$schema".
import { z } from 'zod';
import { type FileKind, KeyChainFile, KINDS } from './layout.js';

type Node = Record<string, unknown>;

const REFERENCE = {
  description:
    "instead of the value: an environment variable that holds it (its name starting with SVC_IMPORT_, or listed in CONFIG_IMPORT_ENV_ALLOW), or a file that holds it (relative to this one, inside this tenant's folder)",
  oneOf: [
    { type: 'object', properties: { env: { type: 'string', minLength: 1 } }, required: ['env'], additionalProperties: false },
    { type: 'object', properties: { file: { type: 'string', minLength: 1 } }, required: ['file'], additionalProperties: false },
  ],
};

/** File name (`credential-config.schema.json`) -> its JSON Schema. */
export function configFileSchemas(): Record<string, Node> {
  return Object.fromEntries(
    Object.entries(KINDS).map(([key, kind]) => {
      const schema = key === 'keyChains' ? z.union(Object.values(KeyChainFile)) : kind.schema;
      return [`${kind.name}.schema.json`, fileSchema(kind, z.toJSONSchema(schema, { io: 'input', unrepresentable: 'any' }) as Node)];
    }),
  );
}

function fileSchema(kind: FileKind, json: Node): Node {
  const where = kind.folder ? `${kind.path}/<id>.json` : kind.path;
  const defs = ((json.$defs as Node | undefined) ?? {}) as Node;
  const { $schema, ...body } = json;
  const references = Object.keys(kind.references).length ? { Reference: REFERENCE } : {};
  const out: Node = { $schema, title: where, description: `The body of ${kind.request}.`, ...body, $defs: { ...defs, ...references } };
  for (const object of branchesOf(out, out).filter((branch) => branch.properties)) {
    (object.properties as Node).$schema = { type: 'string', description: 'the JSON Schema of this file, for editors' };
    // The id may be left out: the file (or folder) name gives it.
    const id = kind.idKey ?? 'id';
    if (Array.isArray(object.required)) object.required = object.required.filter((name) => name !== id);
  }
  for (const path of Object.keys(kind.references)) allowReference({ file: out }, 'file', path.split('.'), out);
  return out;
}

/** What a node stands for: itself, the branches of its union, or the definition it refers to. */
function branchesOf(node: Node, root: Node): Node[] {
  const ref = typeof node.$ref === 'string' ? /^#\/\$defs\/(.+)$/.exec(node.$ref)?.[1] : undefined;
  if (ref) return branchesOf((root.$defs as Node)[ref] as Node, root);
  const branches = (node.anyOf ?? node.oneOf) as Node[] | undefined;
  return branches ? branches.flatMap((branch) => branchesOf(branch, root)) : [node];
}

/** Lets a reference stand in for the value at `path` below container[key] (`*`: every element of an array). */
function allowReference(container: Node, key: string, path: string[], root: Node) {
  const node = container[key] as Node;
  const [segment, ...rest] = path;
  if (segment === undefined) {
    container[key] = { anyOf: [node, { $ref: '#/$defs/Reference' }] };
    return;
  }
  for (const branch of branchesOf(node, root)) {
    const holder = (segment === '*' ? branch : branch.properties) as Node | undefined;
    const childKey = segment === '*' ? 'items' : segment;
    if (holder?.[childKey]) allowReference(holder, childKey, rest, root);
  }
}
