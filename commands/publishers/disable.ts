import { publisherToggle } from '../../src/cli/publisherToggle.js'

export default publisherToggle(false)
