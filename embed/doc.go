// Package embed holds the embedder interface the index ranks with and the
// in-process sentence model (Universal Sentence Encoder Lite) that implements it.
package embed
