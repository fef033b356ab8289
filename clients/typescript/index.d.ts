/** What a file is, who made it and why: the SDK's record shape. */
export interface FileRecord {
  /** Relative to the backing directory, slash-separated. */
  path: string;
  /** The app that created the file; absent when unattributed. */
  createdBy?: string;
  /** Why the file exists; absent when untagged. */
  task?: string;
  /** Apps the file matters to; absent when none. */
  relatedApps?: string[];
  /** RFC 3339 timestamps. */
  createdAt: string;
  updatedAt: string;
  /** Query results only: "best", exact-name hits weighted plus the fused score in [0, 1]; "seed", keyword points plus similarity. */
  score?: number;
  /** Query results only, when the query asked (explain: true): why the file matched. */
  explain?: Explanation;
  /** Query results only (rank "best", scope "all"): the file's best 1-3 passages when its contents matched. */
  passages?: Passage[];
}

/** A run of lines of a file that matched a query by its words or meaning. */
export interface Passage {
  /** The line text begins on, 1-based. */
  line: number;
  /** The passage, or of a longer one the at most 480 bytes where the query's words are densest; the file's bytes, read when the query ran. */
  text: string;
  score: number;
}

/** Why a file matched a query. */
export interface Explanation {
  rank: "best" | "seed";
  /** Query words equal to a whole name of the file (path, segment, basename, creator, related app). */
  names?: string[];
  /** Field ("path", "task", "apps"; seed: "any") to the query words found in it. */
  words?: Record<string, string[]>;
  /** Keyword evidence: best, the IDF-weighted share of the query's words matched (0..1); seed, the points. */
  keyword: number;
  /** Cosine similarity of query and file vectors (absent without vectors). */
  similarity?: number;
  /** best: the similarity relative to the query's closest file (0..1). */
  semantic?: number;
}

export interface QueryOptions {
  /** "best" (the default) or "seed" (the original rule); anything else is refused (invalid). */
  rank?: "best" | "seed";
  /** Add explain to each result. */
  explain?: boolean;
  /** "all" (the default: tags, names and contents) or "tags" (tags and names only); "seed" never looks at contents. */
  scope?: "all" | "tags";
}

export interface Embedding {
  /** e.g. "all-MiniLM-L6-v2"; the daemon must know the model. */
  model: string;
  vector: number[] | Float32Array;
}

export interface SemanticFsClientOptions {
  /** Control socket. Default: BERTH_SEMANTIC_FS_SOCKET, then the daemon's default. */
  socketPath?: string;
  /** Where the app sees the backing directory; absolute paths under it are sent relative. Default: BERTH_CONTEXT_DATA. */
  root?: string;
  /** Supplies the vectors for tags and queries (text is tagText(...) for tags, the query text for queries). */
  embed?: (text: string) => Promise<Embedding>;
  /** Per request; default 30000. */
  timeoutMs?: number;
}

export type SemanticFsErrorCode =
  | "unreachable"
  | "bad_request"
  | "invalid"
  | "invalid_path"
  | "not_found"
  | "too_large"
  | "method_not_allowed"
  | "forbidden"
  | "internal"
  | "unavailable"
  | "embed_failed"
  | "bad_response"
  | "http"
  | (string & {});

export class SemanticFsError extends Error {
  readonly name: "SemanticFsError";
  /** The daemon's error code, or "unreachable", "embed_failed", "bad_response". */
  readonly code: SemanticFsErrorCode;
  /** HTTP status when the daemon answered. */
  readonly status?: number;
  readonly socketPath?: string;
}

export class SemanticFsClient {
  constructor(options?: SemanticFsClientOptions);
  readonly socketPath: string;
  /** Binds this process's uid to app; on failure warns and resolves null. */
  register(options: { app: string }): Promise<{ app: string; uid: number } | null>;
  /** Replaces a file's tags; throws SemanticFsError. */
  tag(path: string, tags?: { task?: string; relatedApps?: string[] }): Promise<FileRecord>;
  /** Files matching text, best first; no limit (or <= 0) returns every match; throws SemanticFsError. */
  query(text: string, limit?: number, options?: QueryOptions): Promise<FileRecord[]>;
  /** Lines matching pattern (Go RE2; a literal with fixed) in the files this uid may read, by path then line; throws SemanticFsError. */
  grep(pattern: string, options?: GrepOptions): Promise<GrepResult>;
  /**
   * Every change after `since` (none: from now), in order, as it happens, until
   * `signal` aborts; a cursor the daemon no longer holds yields one ChangeReset.
   */
  changes(options?: ChangesOptions): AsyncGenerator<Change | ChangeReset, void, undefined>;
}

export interface GrepOptions {
  /** The pattern is a literal string. */
  fixed?: boolean;
  /** Match case-insensitively (Go's simple case folding). */
  ignoreCase?: boolean;
  /** Globs on a file's path or one of its directories, e.g. ["src", "*.md"]. */
  paths?: string[];
  /** Matching lines to return; default 1000, at most 1000000. */
  limit?: number;
  /** Lines of context before and after each match. */
  context?: number;
  /** Also search files not content-indexed (too big, binary, not UTF-8). */
  all?: boolean;
  /** Also give every file searched its count of matching lines (GrepResult.counts), as grep -c. */
  counts?: boolean;
}

export interface GrepMatch {
  path: string;
  /** 1-based; 0 for a binary match. */
  line: number;
  /** 1-based byte offset of the first match in the line; 0 for a binary match. */
  column: number;
  text: string;
  before?: string[];
  after?: string[];
  /** The file holds binary data and matches (GNU grep: "binary file matches"). */
  binary?: boolean;
  /** For a binary match: how many matching lines it stands for (GNU grep -c's count). */
  lines?: number;
}

export interface GrepResult {
  matches: GrepMatch[];
  /** Files with a match in matches. */
  files: number;
  /** More lines matched than limit. */
  truncated: boolean;
  stats: { candidates: number; scanned: number; indexed: number; ms: number };
  /** With counts: every file searched that the caller may read, by path, with its count of matching lines (0 included). */
  counts?: { path: string; lines: number }[];
}

export interface ChangesOptions {
  /** A cursor from an earlier change (or reset); absent: start from now. */
  since?: string;
  /** Ends the iteration quietly when aborted. */
  signal?: AbortSignal;
  /** Doublestar globs on the path (or a rename's old path), e.g. "src/**". */
  paths?: string[];
  /** How long each long poll waits; default 30000. */
  pollMs?: number;
  /** Changes per request; default the daemon's (1000). */
  limit?: number;
}

/** One change of the feed (GET /v1/changes). */
export interface Change {
  rev: number;
  op: "create" | "write" | "truncate" | "mkdir" | "remove" | "rename" | "symlink" | "link" | "setattr" | "tag" | (string & {});
  path: string;
  /** A rename's old path. */
  from?: string;
  type: "file" | "dir" | "symlink" | "fifo" | "";
  /** The attributed app; "" unattributed; "host" for the backing directory's own changes. */
  app: string;
  size: number;
  at: string;
  /** Resume here and nothing after this change is lost. */
  cursor: string;
  reset?: undefined;
}

/** The cursor was no longer in the daemon's history: list again, then go on. */
export interface ChangeReset {
  reset: true;
  cursor: string;
}

/** The daemon's default control socket for this user. */
export function defaultSocketPath(env?: Record<string, string | undefined>): string;

/** The text the daemon embeds for a file's tags. */
export function tagText(task: string | undefined, relatedApps: string[] | undefined, path: string): string;
