package balance

// EncodeMovesForTest is the Store's moves as it keeps them in the cluster.
func EncodeMovesForTest(s *Store) ([]byte, error) { return s.encode() }
