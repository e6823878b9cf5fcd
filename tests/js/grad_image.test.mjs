// Gradients of the image ops: finite differences in float64 for the deterministic ops (layout
// change, normalize, crop, flips, lighting); resize and random augmentations are non-differentiable.
import test from 'node:test';
import { checkGrad, assertClose } from './grad_check.mjs';

test('image ops: finite differences (HWC and NHWC / CHW and NCHW)', () => {
  // to_tensor computes in float32 whatever the input dtype: float32 tolerances
  checkGrad('_image_to_tensor', [{ shape: [3, 4, 2], low: 0, high: 255 }], {}, { eps: 1e-2, rtol: 1e-3, atol: 1e-6 });
  checkGrad('_image_to_tensor', [{ shape: [2, 3, 2, 3], low: 0, high: 255 }], {}, { eps: 1e-2, rtol: 1e-3, atol: 1e-6 });
  checkGrad('_image_normalize', [{ shape: [3, 2, 4] }], { mean: '(0.1, 0.2, 0.3)', std: '(0.5, 2, 4)' });
  checkGrad('_image_normalize', [{ shape: [2, 3, 2, 2] }], { mean: '(0.1, 0.2, 0.3)', std: '(0.5, 2, 4)' });
  checkGrad('_image_crop', [{ shape: [5, 6, 3] }], { x: 1, y: 2, width: 3, height: 2 });
  checkGrad('_image_crop', [{ shape: [2, 5, 6, 1] }], { x: 0, y: 1, width: 4, height: 3 });
  checkGrad('_image_flip_left_right', [{ shape: [3, 5, 3] }]);
  checkGrad('_image_flip_top_bottom', [{ shape: [3, 5, 1] }]);
  // computed in float32 (as MXNet's kernel): float32 tolerances
  checkGrad('_image_adjust_lighting', [{ shape: [2, 3, 3] }], { alpha: '(0.1, -0.2, 0.3)' }, { eps: 1e-2, rtol: 1e-3, atol: 1e-5 });
});

test('resize and random augmentations give zero gradients', () => {
  const { analytic } = checkGrad('_image_resize', [{ shape: [4, 4, 3], low: 0, high: 1 }], { size: '(2, 2)' }, { rtol: Infinity, atol: Infinity });
  assertClose(analytic[0], new Float64Array(48));
});
