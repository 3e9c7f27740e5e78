import type { KeyOwner } from '../accounts/keys.js'
import type { Reservation } from '../accounts/usage.js'
import type { ErrorShape } from './errors.js'

/** What the middleware chain learns about a request, in the order it learns it. */
export interface RequestState {
  requestId: string
  shape: ErrorShape
  /** The JSON media type a success answer is sent as, from Accept or `_format`. */
  mediaType: string
  owner?: KeyOwner
  reservation?: Reservation
}
