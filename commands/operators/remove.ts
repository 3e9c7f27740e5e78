import { Args } from '@oclif/core'
import { removeOperator } from '../../src/accounts/operators.js'
import { endOperatorSessions } from '../../src/accounts/sessions.js'
import { SvcCommand } from '../../src/cli/baseCommand.js'

export default class OperatorsRemove extends SvcCommand {
  static override description = 'Remove an operator; their dashboard sessions end at once'
  static override examples = ['<%= config.bin %> operators remove ops@example.org']
  static override args = {
    email: Args.string({ required: true, description: 'the operator’s email address' }),
  }

  async run() {
    const { args, flags } = await this.parse(OperatorsRemove)
    const { db, store } = await this.openStore(flags)
    const operator = removeOperator(db, args.email)
    const ended = endOperatorSessions(store.live, operator.id)
    this.log(`Operator ${operator.email} removed; ${ended} session(s) ended`)
    return { ...operator, sessionsEnded: ended }
  }
}
