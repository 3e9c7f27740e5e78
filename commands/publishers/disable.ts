import { publisherToggle } from '../../src/scheduling/publisherToggle.js'

export default publisherToggle(false)
