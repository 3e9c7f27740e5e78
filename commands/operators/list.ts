import { listOperators } from '../../src/accounts/operators.js'
import { formatTable, SvcCommand } from '../../src/cli/baseCommand.js'

export default class OperatorsList extends SvcCommand {
  static override description = 'List the operators who may sign in to the dashboard'
  static override examples = ['<%= config.bin %> operators list --json']

  async run() {
    const { flags } = await this.parse(OperatorsList)
    const { db } = await this.openStore(flags, { reads: true })
    const operators = listOperators(db)
    this.log(
      operators.length === 0
        ? 'No operators yet; create one with `svc operators create <email>`'
        : formatTable(operators as never, ['email', 'createdAt']),
    )
    return operators
  }
}
