export { createTestDatabase, type TestDatabase } from './test-database.js';
export { uniquePrefix } from './unique-prefix.js';
export { insertTestJob } from './insert-test-job.js';
