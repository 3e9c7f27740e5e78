import { defineEndpoint, type Endpoint } from '../api/endpoint.js'
import { listPublishers } from './publishers.js'

const PUBLISHER_SCHEMA = {
  type: 'object',
  required: ['slug', 'displayName', 'manifestUrl', 'enabled'],
  properties: {
    slug: { type: 'string' },
    displayName: { type: 'string' },
    manifestUrl: { type: 'string', description: "URL of the publisher's $bulk-publish manifest" },
    enabled: { type: 'boolean' },
  },
}

export const schedulingEndpoints: Endpoint[] = [
  defineEndpoint({
    method: 'GET',
    path: '/v1/scheduling/publishers',
    tag: 'scheduling',
    summary: 'Every slot publisher, enabled and disabled',
    params: {},
    responses: {
      200: {
        description: 'The whole publisher list',
        schema: {
          type: 'object',
          required: ['publishers'],
          properties: { publishers: { type: 'array', items: PUBLISHER_SCHEMA } },
        },
      },
    },
    handler: (_request, { db }) => ({ body: { publishers: listPublishers(db) } }),
  }),
]
