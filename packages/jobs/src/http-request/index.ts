export { httpRequest } from './http-request.js';
export { HttpRequestInputSchema, HttpResponseSchema, HTTP_METHODS } from './schemas.js';
export type { HttpMethod, HttpRequestInput, HttpResponse } from './schemas.js';
export { requestPolicy } from './step-policy.js';
export type { RequestPolicy } from './step-policy.js';
