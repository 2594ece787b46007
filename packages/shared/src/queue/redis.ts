import { Redis } from 'ioredis';

/**
 * A Redis connection. BullMQ workers and blocking/subscriber connections need
 * `maxRetriesPerRequest: null` (they must wait out a Redis restart rather than fail commands);
 * request paths want commands to fail fast so the caller gets a retryable error.
 */
export function createRedis(url: string, options: { blocking?: boolean; name?: string } = {}): Redis {
  return new Redis(url, {
    maxRetriesPerRequest: options.blocking ? null : 2,
    enableOfflineQueue: options.blocking ? true : false,
    connectionName: options.name,
    lazyConnect: false,
    retryStrategy: (times) => Math.min(times * 200, 2000),
  });
}
