import type { KeyOwner } from '../accounts/keys.js'
import type { Endpoint } from '../api/endpoint.js'
import type { Reservation } from '../accounts/usage.js'
import type { ErrorShape } from './errors.js'
import type { PathBase } from './pathBase.js'

/** What the middleware chain learns about a request, in the order it learns it. */
export interface RequestState {
  requestId: string
  /** Which base the path belongs to, from its canonical form: decides the key check, negotiation and shape. */
  base: PathBase
  shape: ErrorShape
  /** The JSON media type a success answer is sent as, from Accept or `_format`. */
  mediaType: string
  /** The endpoint the path names, once routed. */
  endpoint?: Endpoint
  owner?: KeyOwner
  reservation?: Reservation
  /** Not an API request (the dashboard, its files): kept out of the request log and svc top. */
  unlogged?: boolean
}
