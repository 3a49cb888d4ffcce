/* Test helper for tests/cli-pytorch.sh: pushes, through NVTX, exactly the ranges that
 * PyTorch's emit_nvtx(record_shapes=True) pushes for a linear layer and a relu (and a plain
 * range "forward" around them, which is no operator), on the main thread, then
 * AddmmBackward0 on a second thread, as autograd's engine would; never CUDA, so `gputrace
 * run` traces it on a machine without a GPU. */
#include <pthread.h>

#include <nvtx3/nvToolsExt.h>

static void *backward(void *arg)
{
	(void)arg;
	nvtxRangePushA("AddmmBackward0, seq = 4, op_id = 20");
	nvtxRangePop();
	return NULL;
}

int main(void)
{
	pthread_t t;

	nvtxRangePushA("forward");
	nvtxRangePushA("aten::linear, seq = 3, op_id = 10, sizes = [[64, 128], [32, 128], [32]], "
	               "input_op_ids = [(7,0), (8,0), (9,0)]");
	nvtxRangePushA("aten::t, op_id = 11, sizes = [[32, 128]]");
	nvtxRangePop();
	nvtxRangePushA("aten::addmm, seq = 4, op_id = 12, sizes = [[32], [64, 128], [128, 32], "
	               "[], []]");
	nvtxRangePop();
	nvtxRangePop();
	nvtxRangePushA("aten::relu, seq = 5, op_id = 13, sizes = [[64, 32]]");
	nvtxRangePop();
	nvtxRangePop();
	if (pthread_create(&t, NULL, backward, NULL) != 0 || pthread_join(t, NULL) != 0)
		return 1;
	return 0;
}
