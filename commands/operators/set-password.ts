import { Args, Flags } from '@oclif/core'
import { setOperatorPassword } from '../../src/accounts/operators.js'
import { endOperatorSessions } from '../../src/accounts/sessions.js'
import { SvcCommand } from '../../src/cli/baseCommand.js'
import { readNewPassword } from '../../src/cli/password.js'

export default class OperatorsSetPassword extends SvcCommand {
  static override description = 'Set an operator’s password; every session signed in with the old one ends'
  static override examples = [
    '<%= config.bin %> operators set-password ops@example.org',
    'printf %s "$PASSWORD" | <%= config.bin %> operators set-password ops@example.org --password-stdin',
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
    const { args, flags } = await this.parse(OperatorsSetPassword)
    const password = await readNewPassword({
      fromStdin: flags['password-stdin'],
      prompt: 'New password (12+ characters)',
    })
    const { db, store } = await this.openStore(flags)
    const operator = setOperatorPassword(db, args.email, password)
    const ended = endOperatorSessions(store.live, operator.id)
    this.log(`Password of ${operator.email} set; ${ended} session(s) ended`)
    return { ...operator, sessionsEnded: ended }
  }
}
