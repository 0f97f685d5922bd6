import { z } from 'zod';
import { parseValidatorVerdict } from '../verdicts/validator-verdict.js';
import { defineTool, READ_ONLY } from './tool.js';

export const parseValidatorVerdictTool = defineTool({
  name: 'parse_validator_verdict',
  title: "Parse a validator's verdict",
  description:
    'Parses a validator agent\'s answer ending in "**Verdict: PASS|WARN|FAIL**" and a "**Findings:**" list into structured findings. Only FAIL sets retry; retry_prompt is the "## PREVIOUS VALIDATION FAILED" block to send back. Pure text in, data out.',
  input: z.object({
    text: z.string().max(1_000_000).describe("The validator's full answer (markdown)."),
  }),
  output: z.object({
    verdict: z.enum(['PASS', 'WARN', 'FAIL']).nullable(),
    findings: z.array(
      z.object({ level: z.string(), text: z.string(), location: z.string().optional() }),
    ),
    retry: z.boolean(),
    retry_prompt: z.string().optional(),
  }),
  annotations: READ_ONLY,
  async run({ text }) {
    const verdict = parseValidatorVerdict(text);
    return {
      data: verdict,
      summary: verdict.verdict
        ? `Verdict ${verdict.verdict} with ${verdict.findings.length} finding(s)${verdict.retry ? '; retry with the PREVIOUS VALIDATION FAILED prompt' : ''}.`
        : 'No "Verdict: PASS|WARN|FAIL" line found; treat the validation as incomplete.',
    };
  },
});
