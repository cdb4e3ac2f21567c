//go:build !linux

package sqs

const populate = 0
