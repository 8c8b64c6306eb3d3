// The page sizes of the cost curve: the same anonymous select (`order=-views&limit=N`) returning 1,
// 20, 200 and 1,000 rows, so docs/benchmarks.md can say how the cost grows with the answer.
export const CURVE_LIMITS = [1, 20, 200, 1000]
