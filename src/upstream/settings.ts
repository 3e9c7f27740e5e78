import { z } from 'zod'
import { defineSetting } from '../config.js'

/** An upstream answer larger than this is cut off as it passes it (502), never held whole. */
export const UPSTREAM_MAX_ANSWER_MB = defineSetting({
  name: 'upstreamMaxAnswerMb',
  env: 'SVC_UPSTREAM_MAX_ANSWER_MB',
  schema: z.coerce
    .number({ error: 'must be a number of megabytes from 1 to 1024' })
    .min(1, 'must be a number of megabytes from 1 to 1024')
    .max(1024, 'must be a number of megabytes from 1 to 1024'),
  fallback: 32,
})
