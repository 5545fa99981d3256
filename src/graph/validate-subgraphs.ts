import type { Diagnostic, Report } from './diagnostic.js';
import { exitOf } from './subgraph.js';
import type { GraphDef, SubgraphDef } from './types.js';

/**
 * The checks of a graph's input/output schemas and of its subgraphs. A child was validated
 * when it compiled; its warnings are reported again here under the path it runs at
 * (`review/plan`). A mapping written as a record is data: both of its sides are checked
 * against both schemas. A name the flattening would give twice (a node `review/plan` beside
 * subgraph `review`'s node `plan`) is a duplicate. `validate` is the validator itself, passed in
 * so the two files do not import each other.
 */
export function checkSubgraphs(
  def: GraphDef,
  report: Report,
  validate: (def: GraphDef) => Diagnostic[],
): void {
  const fields = new Set(def.fields);
  for (const [key, list] of [
    ['input', def.inputs],
    ['output', def.outputs],
  ] as const) {
    for (const field of list ?? []) {
      if (!fields.has(field))
        report('FIELD_UNKNOWN', `the ${key} schema names "${field}", which is not a state field`);
    }
  }
  const subgraphs = def.subgraphs ?? [];
  if (subgraphs.length === 0) return;
  const own = new Set(def.nodes.map((n) => n.name));
  for (const sub of subgraphs) {
    const where = { node: sub.name };
    for (const d of validate(sub.graph)) {
      const { node, edge } = d;
      report(d.code, `in subgraph "${sub.name}": ${d.message}`, {
        ...(node !== undefined && { node: `${sub.name}/${node}` }),
        ...(edge !== undefined && {
          edge: { from: `${sub.name}/${edge.from}`, to: `${sub.name}/${edge.to}` },
        }),
        hint: d.hint,
        ...(d.details !== undefined && { details: d.details }),
      });
    }
    checkMappings(sub, fields, report);
    if (fields.has(sub.slot)) {
      report(
        'NAME_RESERVED',
        `subgraph "${sub.name}" keeps its state in the private field "${sub.slot}", which the state schema also declares`,
        { ...where, hint: `rename the field "${sub.slot}" or the subgraph` },
      );
    }
    for (const name of flatNames(sub)) {
      if (own.has(name))
        report('NAME_DUPLICATE', `node "${name}" is also a node of subgraph "${sub.name}"`, {
          node: name,
          hint: 'rename the node or the subgraph; names identify activations, effects and checkpoints',
        });
    }
  }
}

function checkMappings(sub: SubgraphDef, fields: ReadonlySet<string>, report: Report): void {
  const child = sub.graph;
  const inputs = new Set(child.inputs ?? child.fields);
  const outputs = new Set(child.outputs ?? child.fields);
  const where = { node: sub.name };
  const hint = `map it to a field of both graphs, or give "${sub.name}" a mapping function`;
  if (sub.input !== 'function') {
    for (const [to, from] of Object.entries(sub.input)) {
      if (!inputs.has(to))
        report(
          'FIELD_UNKNOWN',
          `subgraph "${sub.name}" sets "${to}", which is not an input of graph "${child.name}"`,
          { ...where, hint },
        );
      if (!fields.has(from))
        report(
          'FIELD_UNKNOWN',
          `subgraph "${sub.name}" reads "${from}" for its input "${to}", which is not a state field`,
          { ...where, hint },
        );
    }
  }
  if (sub.output !== 'function') {
    for (const [to, from] of Object.entries(sub.output)) {
      if (!fields.has(to))
        report(
          'FIELD_UNKNOWN',
          `subgraph "${sub.name}" writes "${to}", which is not a state field`,
          { ...where, hint },
        );
      if (!outputs.has(from))
        report(
          'FIELD_UNKNOWN',
          `subgraph "${sub.name}" writes "${to}" from "${from}", which is not an output of graph "${child.name}"`,
          { ...where, hint },
        );
    }
  }
}

/**
 * Every parent goto the subgraphs of `def` declare: the subgraph's node, the child node that
 * declares it, and the target, a node of `def` (or END). Only a child's own nodes send here; a
 * grandchild's were checked against the child when the child compiled.
 */
export function parentGotos(
  def: GraphDef,
): { readonly subgraph: string; readonly node: string; readonly target: string }[] {
  const out: { subgraph: string; node: string; target: string }[] = [];
  for (const sub of def.subgraphs ?? []) {
    for (const node of sub.graph.nodes) {
      if (!Array.isArray(node.parentGoto)) continue;
      for (const target of node.parentGoto)
        out.push({ subgraph: sub.name, node: `${sub.name}/${node.name}`, target });
    }
  }
  return out;
}

/** The names a subgraph's nodes run under in the enclosing graph. */
function flatNames(sub: SubgraphDef): string[] {
  const prefix = `${sub.name}/`;
  const names = [exitOf(sub.name)];
  for (const node of sub.graph.nodes) names.push(prefix + node.name);
  for (const inner of sub.graph.subgraphs ?? [])
    for (const name of flatNames(inner)) names.push(prefix + name);
  return names;
}
