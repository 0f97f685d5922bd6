import { z } from 'zod';

export const stallOutput = z.object({
  stalled: z.boolean(),
  reason: z.enum(['repeated_feedback', 'same_failures', 'no_changes', 'oscillation']).nullable(),
  first_stalled_turn: z.number().nullable(),
  signatures: z.array(z.string()),
  recommendation: z.string(),
});
