import { Args, Flags } from '@oclif/core'
import { SvcCommand } from '../../src/cli/baseCommand.js'
import { storedManifestLocation } from '../../src/scheduling/sync/feed.js'
import { addPublisher } from '../../src/scheduling/publishers.js'

export default class PublishersAdd extends SvcCommand {
  static override description = 'Register a SMART Scheduling Links publisher by its $bulk-publish manifest'
  static override examples = [
    '<%= config.bin %> publishers add acme --manifest https://example.org/$bulk-publish --name "Acme Clinics"',
    '<%= config.bin %> publishers add local --manifest ./fixtures/scheduling/$bulk-publish --disabled',
  ]
  static override args = { slug: Args.string({ required: true, description: 'publisher slug' }) }
  static override flags = {
    manifest: Flags.string({
      required: true,
      description: 'manifest URL (http, https, file://) or file path (stored as an absolute path)',
    }),
    name: Flags.string({ description: 'display name (default: the slug)' }),
    disabled: Flags.boolean({ description: 'register without syncing or serving it yet', default: false }),
  }

  async run() {
    const { args, flags } = await this.parse(PublishersAdd)
    const { db } = await this.openStore(flags)
    const publisher = addPublisher(db, {
      slug: args.slug,
      manifestUrl: storedManifestLocation(flags.manifest),
      displayName: flags.name,
      enabled: !flags.disabled,
    })
    this.log(`Added publisher ${publisher.slug} (${publisher.enabled ? 'enabled' : 'disabled'})`)
    return publisher
  }
}
