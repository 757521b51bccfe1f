// Default training ops of Backend: each throws an engine::Error naming the backend and the op, so a
// backend that cannot train (yet) refuses clearly instead of leaving gradients untouched.
#include "engine/backend.h"
#include "engine/error.h"

namespace engine {

namespace {
[[noreturn]] void no_training_op(const Backend& be, const char* op) {
  throw Error(be.name() + " backend: " + op + " is not implemented (training needs it)");
}
}  // namespace

void Backend::fill_zero(float*, int64_t) { no_training_op(*this, "fill_zero"); }
void Backend::encoder_backward(float*, float*, const float*, const int32_t*, int, int, int) {
  no_training_op(*this, "encoder_backward");
}
void Backend::layernorm_backward(float*, float*, float*, const float*, const float*, const float*, const float*,
                                 const float*, int, int) {
  no_training_op(*this, "layernorm_backward");
}
void Backend::rmsnorm_backward(float*, float*, const float*, const float*, const float*, const float*, int, int) {
  no_training_op(*this, "rmsnorm_backward");
}
void Backend::matmul_backward(float*, float*, float*, const float*, const float*, const float*, int, int, int) {
  no_training_op(*this, "matmul_backward");
}
void Backend::rope_backward(float*, int, int, float*, int, int, int, int, int, float, bool) {
  no_training_op(*this, "rope_backward");
}
void Backend::gelu_backward(float*, const float*, const float*, int64_t) { no_training_op(*this, "gelu_backward"); }
void Backend::swiglu_backward(float*, float*, const float*, const float*, const float*, int64_t) {
  no_training_op(*this, "swiglu_backward");
}
void Backend::axpy(float*, float, const float*, int64_t) { no_training_op(*this, "axpy"); }
void Backend::residual_backward(float*, float*, const float*, int64_t) { no_training_op(*this, "residual_backward"); }
void Backend::dropout_forward(float*, const float*, int64_t, float, uint64_t) {
  no_training_op(*this, "dropout_forward");
}
void Backend::dropout_backward(float*, const float*, int64_t, float, uint64_t) {
  no_training_op(*this, "dropout_backward");
}
void Backend::attention_train_forward(float*, float*, const float*, int, const float*, const float*, int, int, int, int,
                                      int, int, float, uint64_t) {
  no_training_op(*this, "attention_train_forward");
}
void Backend::attention_backward(float*, float*, float*, const float*, const float*, const float*, int, const float*,
                                 const float*, int, int, int, int, int, int, float, uint64_t) {
  no_training_op(*this, "attention_backward");
}
void Backend::softmax_xent_forward(float*, float*, float*, const int32_t*, int, int, float) {
  no_training_op(*this, "softmax_xent_forward");
}
void Backend::softmax_xent_backward(float*, const float*, const int32_t*, const float*, const float*, const float*, int,
                                    int, float) {
  no_training_op(*this, "softmax_xent_backward");
}

}  // namespace engine
