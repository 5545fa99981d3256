// Facts about the machine and versions, recorded with every result.

import { readFileSync } from 'node:fs';
import { cpus } from 'node:os';

function versionOf(pkg: string): string {
  try {
    const url = new URL(`../../node_modules/${pkg}/package.json`, import.meta.url);
    return (JSON.parse(readFileSync(url, 'utf8')) as { version: string }).version;
  } catch {
    return 'unknown';
  }
}

export function environment() {
  const cpu = cpus();
  return {
    node: process.version,
    cpu: cpu[0]?.model.trim() ?? 'unknown',
    cores: cpu.length,
    langgraph: versionOf('@langchain/langgraph'),
    langchainCore: versionOf('@langchain/core'),
    zod: versionOf('zod'),
  };
}
