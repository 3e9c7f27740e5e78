import { Args } from '@oclif/core'
import { setOrganizationPlan } from '../../src/accounts/orgs.js'
import { SvcCommand } from '../../src/cli/baseCommand.js'

export default class OrgsSetPlan extends SvcCommand {
  static override description = "Change an organization's plan; takes effect on its next request"
  static override examples = ['<%= config.bin %> orgs set-plan acme-health team']
  static override args = {
    slug: Args.string({ required: true, description: 'organization slug' }),
    plan: Args.string({ required: true, description: 'plan id', options: ['developer', 'team', 'scale'] }),
  }

  async run() {
    const { args, flags } = await this.parse(OrgsSetPlan)
    const { db } = await this.openStore(flags)
    const org = setOrganizationPlan(db, args.slug, args.plan)
    this.log(`Organization ${org.slug} is now on the ${org.plan} plan`)
    return org
  }
}
