package scenarios

// SetStreamSizes sets the piece and retain sizes of streamed runs
// (Options.Stream) and returns the function that restores them.
func SetStreamSizes(piece, retain int) func() {
	p, r := streamPiece, streamRetain
	streamPiece, streamRetain = piece, retain
	return func() { streamPiece, streamRetain = p, r }
}
