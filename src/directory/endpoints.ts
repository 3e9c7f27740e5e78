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
import { DIRECTORY_LAYOUT, DIRECTORY_STORE } from './declaration.js'
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
export function createDirectory({ db, config, clock, upstream }: AppContext): StoreEndpointsContext {
  const remote = settingOf(config, DIRECTORY_URL)
  const apiKey = settingOf(config, DIRECTORY_API_KEY)
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
    : new LocalSearch(new ReleaseReader(db, DIRECTORY_LAYOUT), DIRECTORY_STORE.types, replacedRelease)
  const cursors = new CursorCodec(db, clock, remote ? 'remote' : 'local')
  return {
    tag: 'directory',
    source,
    cursors,
    responses: UPSTREAM_ERRORS,
    ...(remote ? { waits: 'call' as const } : {}),
  }
}

/** Every type's search (Location has none: read only) and read, as the directory publishes them. */
export const directoryEndpoints = (directory: StoreEndpointsContext): Endpoint[] => [
  ...DIRECTORY_STORE.types.flatMap(({ type, search }) =>
    search ? [searchEndpoint(directory, type, search, SEARCH_SUMMARIES[type] ?? type)] : [],
  ),
  ...DIRECTORY_STORE.types.map(({ type }) =>
    readEndpoint(directory, type, `Read a ${type} as the directory publishes it`),
  ),
]
