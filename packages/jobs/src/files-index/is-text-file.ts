/** How much of a file's start is inspected for NUL bytes. */
export const SNIFF_BYTES = 8192;

/** Extensions (lower-case, no dot) treated as text when their first bytes hold no NUL. */
export const TEXT_EXTENSIONS: ReadonlySet<string> = new Set([
  // code
  'ts', 'tsx', 'mts', 'cts', 'js', 'jsx', 'mjs', 'cjs', 'py', 'pyi', 'rb', 'go', 'rs', 'java', 'kt', 'kts', 'scala',
  'c', 'h', 'cc', 'cpp', 'cxx', 'hpp', 'hh', 'cs', 'fs', 'swift', 'm', 'mm', 'php', 'pl', 'pm', 'lua', 'r', 'jl',
  'dart', 'ex', 'exs', 'erl', 'hrl', 'clj', 'cljs', 'elm', 'hs', 'ml', 'mli', 'nim', 'zig', 'v', 'vue', 'svelte',
  'astro', 'sol', 'sql', 'graphql', 'gql', 'proto', 'thrift', 'tcl', 'groovy', 'gradle', 'asm', 's',
  // shells and build files
  'sh', 'bash', 'zsh', 'fish', 'ps1', 'psm1', 'bat', 'cmd', 'mk', 'cmake', 'bazel', 'bzl', 'nix', 'tf', 'tfvars', 'hcl',
  // markup, styles and prose
  'md', 'mdx', 'markdown', 'rst', 'adoc', 'txt', 'text', 'tex', 'bib', 'org', 'html', 'htm', 'xhtml', 'xml', 'xsl',
  'svg', 'css', 'scss', 'sass', 'less', 'styl', 'hbs', 'mustache', 'ejs', 'pug', 'njk', 'liquid', 'j2', 'jinja',
  // data and config
  'json', 'jsonc', 'json5', 'jsonl', 'ndjson', 'yaml', 'yml', 'toml', 'ini', 'cfg', 'conf', 'config', 'properties',
  'env', 'csv', 'tsv', 'lock', 'editorconfig', 'gitignore', 'gitattributes', 'npmrc', 'nvmrc', 'dockerignore',
  'prettierrc', 'eslintrc', 'babelrc', 'log', 'diff', 'patch', 'srt', 'vtt', 'ics', 'plist', 'http', 'rest',
]);

/** Extension-less or dot-files known to be text (lower-case). */
export const TEXT_FILE_NAMES: ReadonlySet<string> = new Set([
  'makefile', 'gnumakefile', 'dockerfile', 'containerfile', 'jenkinsfile', 'procfile', 'gemfile', 'rakefile',
  'vagrantfile', 'brewfile', 'justfile', 'license', 'licence', 'copying', 'notice', 'authors', 'contributors',
  'readme', 'changelog', 'codeowners', 'owners', '.gitignore', '.gitattributes', '.gitmodules', '.editorconfig',
  '.npmrc', '.nvmrc', '.env', '.dockerignore', '.prettierrc', '.eslintrc', '.babelrc', '.bashrc', '.zshrc', '.profile',
]);

/** Extensions never treated as text, even when their first bytes happen to hold no NUL. */
export const BINARY_EXTENSIONS: ReadonlySet<string> = new Set([
  'png', 'jpg', 'jpeg', 'gif', 'bmp', 'ico', 'icns', 'webp', 'avif', 'heic', 'tif', 'tiff', 'psd', 'pdf', 'zip',
  'gz', 'tgz', 'bz2', 'xz', 'zst', '7z', 'rar', 'tar', 'jar', 'war', 'whl', 'exe', 'dll', 'so', 'dylib', 'a', 'o',
  'obj', 'lib', 'bin', 'class', 'pyc', 'pyo', 'wasm', 'node', 'woff', 'woff2', 'ttf', 'otf', 'eot', 'mp3', 'mp4',
  'm4a', 'wav', 'flac', 'ogg', 'opus', 'mov', 'avi', 'mkv', 'webm', 'sqlite', 'sqlite3', 'db', 'parquet', 'avro',
  'pkl', 'npy', 'npz', 'pt', 'onnx', 'safetensors', 'doc', 'docx', 'xls', 'xlsx', 'ppt', 'pptx', 'odt', 'iso', 'dmg',
]);

function extensionOf(name: string): string {
  const dot = name.lastIndexOf('.');
  return dot <= 0 ? '' : name.slice(dot + 1).toLowerCase();
}

function isValidUtf8Prefix(bytes: Uint8Array): boolean {
  try {
    // `stream: true` tolerates a multi-byte character cut off at the end of the sample.
    new TextDecoder('utf-8', { fatal: true }).decode(bytes, { stream: true });
    return true;
  } catch {
    return false;
  }
}

/**
 * Whether to extract a file's text. A known binary extension or a NUL byte in the first
 * {@link SNIFF_BYTES} bytes says no; a known text extension or name says yes; anything else
 * (`bin/run`, `notes.xyz`) is text when its first bytes are valid UTF-8.
 * @param path the file's path or name; only the base name is used
 * @param head the file's first bytes (more than SNIFF_BYTES is fine; the rest is ignored)
 */
export function isTextFile(path: string, head: Uint8Array): boolean {
  const name = path.slice(path.lastIndexOf('/') + 1);
  const ext = extensionOf(name);
  if (BINARY_EXTENSIONS.has(ext)) return false;
  const sample = head.subarray(0, SNIFF_BYTES);
  if (sample.includes(0)) return false;
  if (TEXT_EXTENSIONS.has(ext) || TEXT_FILE_NAMES.has(name.toLowerCase())) return true;
  return isValidUtf8Prefix(sample);
}
