import { Args, Flags } from '@oclif/core'
import { createOrganization } from '../../src/accounts/orgs.js'
import { SvcCommand } from '../../src/cli/baseCommand.js'

export default class OrgsCreate extends SvcCommand {
  static override description = 'Create an organization (new organizations start on the Developer plan)'
  static override examples = [
    '<%= config.bin %> orgs create acme-health --name "Acme Health"',
    '<%= config.bin %> orgs create city-clinic --plan team --json',
  ]
  static override args = {
    slug: Args.string({ required: true, description: 'lowercase id, e.g. acme-health' }),
  }
  static override flags = {
    name: Flags.string({ description: 'display name (default: the slug)' }),
    plan: Flags.string({
      description: 'plan id',
      options: ['developer', 'team', 'scale'],
      default: 'developer',
    }),
  }

  async run() {
    const { args, flags } = await this.parse(OrgsCreate)
    const { db } = await this.openStore(flags)
    const org = createOrganization(db, { slug: args.slug, name: flags.name, plan: flags.plan })
    this.log(`Created organization ${org.slug} (${org.name}) on the ${org.plan} plan`)
    return org
  }
}
