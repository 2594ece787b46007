export { filesIndex } from './files-index.js';
export { FilesIndexInputSchema, FilesIndexResultSchema } from './schemas.js';
export type { FilesIndexInput, FilesIndexResult } from './schemas.js';
export { searchIndex } from './search-index.js';
export type { SearchMatch } from './search-index.js';
export { IndexRecordSchema } from './index-record.js';
export type { IndexRecord } from './index-record.js';
