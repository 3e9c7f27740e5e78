import { defineSetting } from '../config.js'

/** The name the reconciling appliance signs its Provenances with (their author and transmitter). */
export const MEDLIST_ORGANIZATION = defineSetting({
  name: 'medlistOrganization',
  env: 'SVC_MEDLIST_ORGANIZATION',
  rule: (z) => z.string().trim().min(1, 'must be a name').max(200, 'must be at most 200 characters'),
  fallback: 'svc medication reconciliation',
})
