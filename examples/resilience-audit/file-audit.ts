import { z } from 'zod';
import { append, END, graph } from '../../src/index.js';
import { type ModelRef, model, type PriceTable } from '../../src/model/index.js';
import { problemsOf } from './checks.js';
import { readSource } from './corpus.js';
import { auditorSystem, numbered, prompt } from './prompts.js';
import { AuditorOutput, Coverage, Finding, Remark } from './schema.js';

/** One file's audit: its input is the file, its output what the audit found and covered. */
export const FileAudit = z.object({
  file: z.string(),
  readable: z.boolean().default(false),
  findings: z.array(Finding).default([]),
  unverifiedRemarks: z.array(Remark).default([]),
  coverage: z.array(Coverage).default([]),
});
export type FileAuditState = z.output<typeof FileAudit>;

/**
 * The per-file audit as a graph of its own, for the audit to map over its files as a subgraph:
 * `read` looks the file up, its router sends an unreadable one to `gap` (a coverage gap, never
 * "clean", and no model is asked) and a readable one to `audit`, the auditor model, whose
 * deterministic check quarantines uncitable findings. The same answers as the one-node auditor.
 *
 * @example
 * graph('audit', { state }).subgraph('audit', fileAudit(model), { input: (_s, { item }) => ({ file: item }) })
 */
export function fileAudit(auditorModel: ModelRef, prices: PriceTable) {
  const auditor = model<FileAuditState, AuditorOutput>({
    model: auditorModel,
    system: auditorSystem,
    prompt: (s) =>
      prompt('Audit this file.', { file: s.file, source: numbered(readSource(s.file) ?? '') }),
    output: AuditorOutput,
    checkItems: { findings: problemsOf },
    update: ({ findings, remarks }, s, { quarantined }) => ({
      findings: [...findings],
      unverifiedRemarks: remarks.map((text) => ({ file: s.file, text })),
      coverage: [
        {
          file: s.file,
          status: 'audited',
          findings: findings.length + quarantined.length,
          detail: '',
        },
      ],
    }),
    temperature: 0,
    prices,
  });
  return graph('file-audit', {
    state: FileAudit,
    reducers: { findings: append, unverifiedRemarks: append, coverage: append },
    input: FileAudit.pick({ file: true }),
    output: FileAudit.pick({ findings: true, unverifiedRemarks: true, coverage: true }),
  })
    .node('read', (s) => ({ readable: readSource(s.file) !== undefined }), {
      reads: ['file'],
      writes: ['readable'],
    })
    .node(
      'gap',
      (s) => ({
        coverage: [{ file: s.file, status: 'unreadable', findings: 0, detail: 'file-not-found' }],
      }),
      { reads: ['file'], writes: ['coverage'] },
    )
    .node('audit', auditor, {
      reads: ['file'],
      writes: ['findings', 'unverifiedRemarks', 'coverage'],
      retry: { attempts: 2, backoffMs: 500 },
      timeoutMs: 60_000,
    })
    .route('read', (s) => (s.readable ? 'audit' : 'gap'), ['audit', 'gap'])
    .edge('gap', END)
    .edge('audit', END)
    .entry('read')
    .compile();
}
