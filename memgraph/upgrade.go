package memgraph

// LegacyStateDir is the folder of daemon state (cursor, settings, status)
// that the build before the rename, then called engram, kept in a memory
// repository; today it is StateDir. The old name lives in upgrade code
// only.
const LegacyStateDir = ".engram"
