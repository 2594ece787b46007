import { z } from 'zod';
import { ListJobTypesInputSchema, ListJobTypesOutputSchema } from '@stepwise/shared';
import { toToolSuccess } from '../to-tool-result.js';
import { defineTool } from './tool.js';

export const listJobTypesTool = defineTool({
  name: 'list_job_types',
  title: 'List job types',
  description: 'Lists the job types start_job accepts, each with what it does and the JSON Schema of its input.',
  input: ListJobTypesInputSchema,
  output: ListJobTypesOutputSchema,
  annotations: { title: 'List job types', readOnlyHint: true, idempotentHint: true, openWorldHint: false },
  async handler(_args, ctx) {
    const types = ctx.registry.list().map((t) => {
      const inputSchema = z.toJSONSchema(t.input, { io: 'input', unrepresentable: 'any' }) as Record<string, unknown>;
      delete inputSchema.$schema;
      return { name: t.name, title: t.title, description: t.description, inputSchema };
    });
    return toToolSuccess({ types }, types.map((t) => `${t.name}: ${t.description}`).join('\n'));
  },
});
