/** A tiny offline "search index": the example needs no network and no API key. */
export interface Source {
  readonly id: string;
  readonly title: string;
  readonly text: string;
}

export const corpus: readonly Source[] = [
  {
    id: 'tea-history',
    title: 'A short history of tea',
    text: 'Tea was drunk in China by the 3rd century AD. Tea reached Europe in the 16th century.',
  },
  {
    id: 'coffee-history',
    title: 'A short history of coffee',
    text: 'Coffee drinking is first recorded in Yemen in the 15th century.',
  },
  {
    id: 'tea-trade',
    title: 'The tea trade',
    text: 'The Dutch East India Company shipped tea to Europe from 1610.',
  },
];

/** The source with this id, if any. */
export function source(id: string): Source | undefined {
  return corpus.find((s) => s.id === id);
}

/** Sources whose text mentions any word of the query. */
export function search(query: string): Source[] {
  const words = query.toLowerCase().split(/\W+/).filter(Boolean);
  return corpus.filter((s) => words.some((w) => s.text.toLowerCase().includes(w)));
}
