import { Args, Flags } from '@oclif/core'
import { createOperator } from '../../src/accounts/operators.js'
import { SvcCommand } from '../../src/cli/baseCommand.js'
import { readNewPassword } from '../../src/cli/password.js'

export default class OperatorsCreate extends SvcCommand {
  static override description =
    'Create an operator who signs in to the dashboard; the password is typed at a prompt or piped in'
  static override examples = [
    '<%= config.bin %> operators create ops@example.org',
    'printf %s "$PASSWORD" | <%= config.bin %> operators create ops@example.org --password-stdin --json',
  ]
  static override args = {
    email: Args.string({ required: true, description: 'the operator’s email address' }),
  }
  static override flags = {
    'password-stdin': Flags.boolean({
      description: 'read the password from standard input (its first line)',
    }),
  }

  async run() {
    const { args, flags } = await this.parse(OperatorsCreate)
    const password = await readNewPassword({
      fromStdin: flags['password-stdin'],
      prompt: 'Password (12+ characters)',
    })
    const { db, config } = await this.openStore(flags)
    const operator = createOperator(db, { email: args.email, password })
    this.log(`Operator ${operator.email} created; sign in at ${config.dashboardUrl}`)
    return operator
  }
}
