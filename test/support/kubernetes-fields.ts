// Field names checked as strictly as the API server checks them. kubernetes-models' validate() checks
// types and required fields but lets an unknown field pass (a `periodSecond` in a probe, a
// `readOnlyRootFileSystem`), which `kubectl apply` refuses (strict field validation) or, with an
// older client, drops silently: the setting never takes effect. Its TypeScript interfaces name every
// field, so each resource is written as an object literal of its interface into a source file held in
// memory, and the compiler's excess-property check reports each field the API does not have.
import { join } from 'node:path';
import ts from 'typescript';
import type { Resource } from './kustomize.js';

/** The interface of each kind the manifests hold: module of kubernetes-models, and type name. */
const INTERFACES = new Map<string, [module: string, type: string]>([
  ['v1/ServiceAccount', ['kubernetes-models/v1', 'IServiceAccount']],
  ['v1/ConfigMap', ['kubernetes-models/v1', 'IConfigMap']],
  ['v1/Secret', ['kubernetes-models/v1', 'ISecret']],
  ['v1/Service', ['kubernetes-models/v1', 'IService']],
  ['apps/v1/Deployment', ['kubernetes-models/apps/v1', 'IDeployment']],
  ['autoscaling/v2/HorizontalPodAutoscaler', ['kubernetes-models/autoscaling/v2', 'IHorizontalPodAutoscaler']],
  ['policy/v1/PodDisruptionBudget', ['kubernetes-models/policy/v1', 'IPodDisruptionBudget']],
  ['networking.k8s.io/v1/NetworkPolicy', ['kubernetes-models/networking.k8s.io/v1', 'INetworkPolicy']],
]);

/** Whether fieldProblems can check this resource's kind (a custom resource, say, it cannot). */
export const hasFieldSchema = (resource: Resource) => INTERFACES.has(`${resource.apiVersion}/${resource.kind}`);

/**
 * Each field of `resources` that its Kubernetes type does not have, or whose value has the wrong
 * type, as `<kind>/<name>: <compiler message>`; empty when all are as the API takes them.
 */
export function fieldProblems(resources: Resource[], root: string): string[] {
  // Beside the project's sources, so that `kubernetes-models` resolves from its node_modules.
  const file = join(root, 'test', '__kubernetes-manifests__.ts');
  const imports = new Map<string, Set<string>>();
  const declarations: string[] = [];
  const owners: { line: number; name: string }[] = [];
  let line = 0;
  resources.forEach((resource, index) => {
    const found = INTERFACES.get(`${resource.apiVersion}/${resource.kind}`);
    if (!found) throw new Error(`${resource.apiVersion} ${resource.kind}: no interface to check its fields against`);
    const [module, type] = found;
    imports.set(module, (imports.get(module) ?? new Set()).add(type));
    const text = `export const resource${index}: ${type} = ${JSON.stringify(resource, null, 2)};`;
    owners.push({ line, name: `${resource.kind}/${resource.metadata.name}` });
    declarations.push(text);
    line += text.split('\n').length;
  });
  const header = [...imports].map(([module, types]) => `import type { ${[...types].join(', ')} } from '${module}';`);
  const source = [...header, ...declarations].join('\n');

  const options: ts.CompilerOptions = {
    target: ts.ScriptTarget.ES2022,
    module: ts.ModuleKind.NodeNext,
    moduleResolution: ts.ModuleResolutionKind.NodeNext,
    strict: true,
    noEmit: true,
    skipLibCheck: true,
    types: [],
  };
  const host = ts.createCompilerHost(options);
  const getSourceFile = host.getSourceFile;
  host.getSourceFile = (name, language, ...rest) =>
    name === file ? ts.createSourceFile(name, source, language) : getSourceFile.call(host, name, language, ...rest);
  const fileExists = host.fileExists;
  host.fileExists = (name) => name === file || fileExists.call(host, name);
  const program = ts.createProgram([file], options, host);
  const sourceFile = program.getSourceFile(file);
  return ts.getPreEmitDiagnostics(program, sourceFile).map((diagnostic) => {
    const message = ts.flattenDiagnosticMessageText(diagnostic.messageText, ' ');
    if (!diagnostic.file || diagnostic.start === undefined) return message;
    const at = diagnostic.file.getLineAndCharacterOfPosition(diagnostic.start).line - header.length;
    const owner = owners.filter((candidate) => candidate.line <= at).at(-1);
    return `${owner?.name ?? 'imports'}: ${message}`;
  });
}
