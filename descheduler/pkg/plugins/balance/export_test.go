package balance

// EncodeMovesForTest is the Store's moves as it keeps them in the cluster.
func EncodeMovesForTest(s *Store) ([]byte, error) { return s.encode() }

// MergeMovesForTest adds the moves kept in data to the Store, as Recall
// does, and returns how many it did not hold.
func MergeMovesForTest(s *Store, data []byte) (int, error) { return s.merge(data) }
