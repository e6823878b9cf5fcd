// autograd.mjs -- mx.autograd's mode switches: record() and trainMode() run a function with
// training behaviour on (Dropout samples its mask, BatchNorm normalizes with batch statistics
// and updates its running statistics), pause() and predictMode() with it off, as Python's
// `with autograd.record():` blocks. Gradients (backward, grad) come with the training work and
// are not available yet.
import { M } from './core.mjs';

let recording = false;
let training = false;

function withState(rec, train, fn) {
  const prev = [recording, training];
  recording = rec;
  training = train;
  M._mxw_set_training(train ? 1 : 0);
  try {
    return fn();
  } finally {
    [recording, training] = prev;
    M._mxw_set_training(training ? 1 : 0);
  }
}

// record(fn, trainMode = true)
export function record(fn, trainMode = true) { return withState(true, trainMode, fn); }
// pause(fn, trainMode = false)
export function pause(fn, trainMode = false) { return withState(false, trainMode, fn); }
export function trainMode(fn) { return withState(recording, true, fn); }
export function predictMode(fn) { return withState(recording, false, fn); }
export const isRecording = () => recording;
export const isTraining = () => training;
// Python's set_training / set_recording: set the state, return the previous value.
export function setTraining(flag) {
  const prev = training;
  training = !!flag;
  M._mxw_set_training(training ? 1 : 0);
  return prev;
}
export function setRecording(flag) {
  const prev = recording;
  recording = !!flag;
  return prev;
}
