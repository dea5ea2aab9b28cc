package relay

// RecheckAfter is recheckAfter, for the tests outside the package.
const RecheckAfter = recheckAfter
