import { listOrganizations } from '../../src/accounts/orgs.js'
import { formatTable, SvcCommand } from '../../src/cli/baseCommand.js'

export default class OrgsList extends SvcCommand {
  static override description = 'List organizations and their plans'
  static override examples = ['<%= config.bin %> orgs list', '<%= config.bin %> orgs list --json']

  async run() {
    const { flags } = await this.parse(OrgsList)
    const { db } = await this.openStore(flags, { reads: true })
    const orgs = listOrganizations(db)
    this.log(
      orgs.length === 0
        ? 'No organizations yet; create one with `svc orgs create <slug>`'
        : formatTable(orgs as never, ['slug', 'name', 'plan', 'createdAt']),
    )
    return orgs
  }
}
