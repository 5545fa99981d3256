import { mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';

/** What publish sends. */
export interface PostInput {
  readonly version: string;
  readonly title: string;
  readonly body: string;
  /** The model that wrote it (`provider:model-id`), when publish says. */
  readonly model?: string;
}

/** A post as the CMS stores it, under the idempotency key it was created with. */
export interface Post extends PostInput {
  readonly id: string;
  readonly key: string;
  readonly url: string;
  readonly publishedAt: string;
}

/** The CMS file: every post by key, and how many publish calls arrived (repeats included). */
export interface CmsData {
  readonly calls: number;
  readonly posts: Readonly<Record<string, Post>>;
}

/** Where the CMS keeps its file: `WAYMARK_CMS_FILE`, else `.waymark/cms.json` under cwd. */
export function cmsFile(): string {
  return resolve(process.env.WAYMARK_CMS_FILE ?? '.waymark/cms.json');
}

/** The CMS file's contents; an empty CMS if there is no file yet. */
export function readCms(file: string = cmsFile()): CmsData {
  try {
    return JSON.parse(readFileSync(file, 'utf8')) as CmsData;
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return { calls: 0, posts: {} };
    throw e;
  }
}

/**
 * A local stand-in for a CMS that accepts an idempotency key, as real publishing and payment
 * APIs do: the first call with a key creates the post, every later call with that key returns
 * the post it created and creates nothing. Each call is counted, so a demo shows "1 post,
 * 2 calls" when a key was sent twice. The file is replaced whole (temp file + rename), so a
 * reader never sees half of it; one writer process at a time is assumed.
 */
export const cms = {
  async publish(key: string, post: PostInput, file: string = cmsFile()): Promise<Post> {
    const data = readCms(file);
    const existing = data.posts[key];
    const stored: Post = existing ?? {
      id: `post-${Object.keys(data.posts).length + 1}`,
      key,
      url: `file://${file}#post-${Object.keys(data.posts).length + 1}`,
      publishedAt: new Date().toISOString(),
      version: post.version,
      title: post.title,
      body: post.body,
      ...(post.model !== undefined && { model: post.model }),
    };
    write(file, { calls: data.calls + 1, posts: { ...data.posts, [key]: stored } });
    return stored;
  },
};

function write(file: string, data: CmsData): void {
  mkdirSync(dirname(file), { recursive: true });
  const temp = `${file}.${process.pid}.tmp`;
  writeFileSync(temp, `${JSON.stringify(data, null, 2)}\n`);
  renameSync(temp, file);
}
