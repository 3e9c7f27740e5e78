import { Args } from '@oclif/core'
import { formatTable, SvcCommand } from '../../src/cli/baseCommand.js'
import { findRequest } from '../../src/stats/requestLog.js'
import { isUuid } from '../../src/uuid.js'

export default class RequestsShow extends SvcCommand {
  static override description = 'Show a logged request by the id from its X-Request-Id header (kept 30 days)'
  static override examples = ['<%= config.bin %> requests show 0b6a0c3e-2f43-4a8e-9d51-2f7d0d5d9a11 --json']
  static override args = { id: Args.string({ required: true, description: 'request id (UUID)' }) }

  async run() {
    const { args, flags } = await this.parse(RequestsShow)
    if (!isUuid(args.id)) {
      this.error(`"${args.id}" is not a request id: give the UUID of a response's X-Request-Id header`, {
        exit: 2,
      })
    }
    const { store } = await this.openStore(flags, { reads: true })
    const request = findRequest(store, args.id)
    if (!request) this.error(`No request ${args.id} in the log (records are kept 30 days)`, { exit: 1 })
    const row = {
      ...request,
      at: new Date(request.at).toISOString(),
      durationMs: request.durationMs.toFixed(2),
    }
    this.log(
      formatTable(
        [row],
        ['requestId', 'at', 'org', 'keyId', 'method', 'path', 'status', 'durationMs', 'bytes'],
      ),
    )
    return row
  }
}
