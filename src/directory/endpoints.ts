import type { AppContext } from '../api/domain.js'
import type { Endpoint } from '../api/endpoint.js'
import { CursorCodec } from '../fhir/cursor.js'
import { readEndpoint, searchEndpoint, type StoreEndpointsContext } from '../fhir/store/endpoints.js'
import { ReleaseReader } from '../fhir/store/reader.js'
import { RemoteSearch } from '../fhir/store/remote.js'
import { LocalSearch } from '../fhir/store/search.js'
import { ApiError } from '../http/errors.js'
import { settingOf } from '../config.js'
import { UpstreamSource } from '../upstream/client.js'
import { NETWORK_LISTINGS } from '../fhir/networkListings.js'
import { DIRECTORY_LAYOUT, DIRECTORY_STORE } from './declaration.js'
import { networkListings } from './networkListings.js'
import { DIRECTORY_API_KEY, DIRECTORY_TIMEOUT_MS, DIRECTORY_URL } from './settings.js'

const SEARCH_SUMMARIES: Record<string, string> = {
  Practitioner: 'Find practitioners by NPI or by name (no total, ever)',
  PractitionerRole: "A practitioner's roles",
  OrganizationAffiliation:
    'Network membership: affiliations by network, primary or participating organization',
  Endpoint: "An organization's technical endpoints",
  Organization: 'Providers, payers and insurance networks',
  HealthcareService: 'Healthcare services by organization, location, type or specialty',
}

const UPSTREAM_ERRORS = {
  502: { description: 'The remote directory refused, failed or answered unreadably' },
  503: { description: 'The remote directory is rate limiting (code throttled, Retry-After)' },
  504: { description: 'The remote directory did not answer in time' },
}

const replacedRelease = () =>
  ApiError.invalid([
    {
      path: ['page'],
      message: '"page" belongs to a directory release that has since been replaced; start the search again',
    },
  ])

/** One app's directory: where its answers come from (the configuration decides), and its cursors. */
export function createDirectory({ db, config, clock, upstream, ports }: AppContext): StoreEndpointsContext {
  const remote = settingOf(config, DIRECTORY_URL)
  const apiKey = settingOf(config, DIRECTORY_API_KEY)
  const reader = new ReleaseReader(db, DIRECTORY_LAYOUT)
  const source = remote
    ? new RemoteSearch(
        new UpstreamSource({
          ...upstream,
          baseUrl: remote,
          name: 'The remote directory',
          timeoutMs: settingOf(config, DIRECTORY_TIMEOUT_MS),
          headers: apiKey ? { authorization: `Bearer ${apiKey}` } : undefined,
        }),
        DIRECTORY_STORE.types,
      )
    : new LocalSearch(reader, DIRECTORY_STORE.types, replacedRelease)
  ports.provide(
    NETWORK_LISTINGS,
    networkListings(source, () => remote !== undefined || reader.snapshot(() => reader.release()) !== 0),
  )
  const cursors = new CursorCodec(db, clock, remote ? 'remote' : 'local')
  return {
    tag: 'directory',
    source,
    cursors,
    responses: UPSTREAM_ERRORS,
    ...(remote ? { waits: 'call' as const } : {}),
  }
}

const SERVED_TYPES = DIRECTORY_STORE.types.filter((type) => !type.internal)

/** Every served type's search (Location has none: read only) and read, as the directory publishes them. */
export const directoryEndpoints = (directory: StoreEndpointsContext): Endpoint[] => [
  ...SERVED_TYPES.flatMap(({ type, search }) =>
    search ? [searchEndpoint(directory, type, search, SEARCH_SUMMARIES[type] ?? type)] : [],
  ),
  ...SERVED_TYPES.map(({ type }) =>
    readEndpoint(directory, type, `Read a ${type} as the directory publishes it`),
  ),
]
