import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';

// The page (src/ui) runs in a browser and talks to the server only over HTTP: it imports its own
// files, its few libraries, and at most types from the rest of src/ (DESIGN.md section 10).

const ui = new URL('../../src/ui/', import.meta.url).pathname;
const libraries = ['react', 'react-dom/client', '@xyflow/react', '@dagrejs/dagre'];
const styles = ['@xyflow/react/dist/style.css'];

function files(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? files(join(dir, e.name)) : /\.tsx?$/.test(e.name) ? [join(dir, e.name)] : [],
  );
}

describe('the web page (src/ui)', () => {
  it('imports only its own files and its libraries; from the rest of src/, types at most', () => {
    const problems: string[] = [];
    for (const file of files(ui)) {
      const text = readFileSync(file, 'utf8');
      for (const m of text.matchAll(/^(import|export)\s+(type\s+)?[^'"]*?from\s+'([^']+)'/gm)) {
        const [, , typeOnly, spec] = m as unknown as [string, string, string | undefined, string];
        const name = relative(ui, file);
        if (spec.startsWith('.')) {
          const inside = !relative(ui, join(file, '..', spec)).startsWith('..');
          if (!inside && typeOnly === undefined) problems.push(`${name} imports ${spec}`);
        } else if (!libraries.includes(spec)) problems.push(`${name} imports ${spec}`);
      }
      for (const m of text.matchAll(/^import\s+'([^']+)'/gm)) {
        if (!m[1]!.startsWith('./') && !styles.includes(m[1]!))
          problems.push(`${relative(ui, file)} imports ${m[1]}`);
      }
    }
    expect(problems).toEqual([]);
  });
});
