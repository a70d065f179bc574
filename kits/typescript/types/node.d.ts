// The few Node.js declarations this kit uses, written out here because Node's
// own (the npm package @types/node) is not installed. tsconfig.json sets
// "types": [] so that an @types/node you install later does not clash with
// these. If you want more of Node's API, `npm install --save-dev @types/node`,
// delete this file and set "types": ["node"] in tsconfig.json.

/** A readable stream, as far as node:readline needs to know. */
interface NodeReadable {
  setEncoding(encoding: "utf8"): this;
}

/** A writable stream: stdout and stderr. */
interface NodeWritable {
  write(text: string): boolean;
}

declare const process: {
  readonly stdin: NodeReadable;
  readonly stdout: NodeWritable;
  readonly stderr: NodeWritable;
  readonly env: { readonly [name: string]: string | undefined };
  exit(code?: number): never;
};

/**
 * Only `console.error` (which writes to stderr) is declared: `console.log`
 * writes to stdout, where any line that is not a protocol message forfeits
 * the game, so using it here is a compile error on purpose.
 */
declare const console: {
  error(...data: unknown[]): void;
};

/** The folder of the running compiled file (CommonJS). */
declare const __dirname: string;

declare module "node:readline" {
  export interface Interface {
    on(event: "line", listener: (line: string) => void): this;
    on(event: "close", listener: () => void): this;
    close(): void;
  }
  export function createInterface(options: { input: NodeReadable; crlfDelay?: number }): Interface;
}

declare module "node:fs" {
  export function existsSync(path: string): boolean;
  export function readdirSync(path: string): string[];
  export function readFileSync(path: string, encoding: "utf8"): string;
}

declare module "node:path" {
  export function join(...parts: string[]): string;
}

declare module "node:test" {
  /** Declares one test; it fails when `fn` throws. */
  export function test(name: string, fn: () => void | Promise<void>): Promise<void>;
}

declare module "node:assert/strict" {
  export function ok(value: unknown, message?: string): asserts value;
  export function equal<T>(actual: unknown, expected: T, message?: string): asserts actual is T;
  export function deepEqual<T>(actual: unknown, expected: T, message?: string): asserts actual is T;
  export function match(text: string, pattern: RegExp, message?: string): void;
}
