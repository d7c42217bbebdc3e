// Loads an ONNX model, feeds it deterministic random inputs, and prints the outputs and where
// each node ran. Usage: recur_example MODEL.onnx [SIZE]; SIZE (default 3) is given to every
// dimension the model leaves symbolic (batch, seq, ...).
#include <recur/recur.h>

#include <cstdint>
#include <cstdlib>
#include <iostream>
#include <random>
#include <string>
#include <vector>

namespace {

recur::Tensor random_input(const recur::ValueInfo& info, int64_t size, std::mt19937& rng) {
  recur::Shape shape;
  if (info.shape) {
    for (const recur::Dim& d : *info.shape) shape.push_back(d.is_fixed() ? d.value : size);
  }
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  switch (info.dtype) {
    case recur::DType::kFloat32: {
      std::uniform_real_distribution<float> u(-1.0f, 1.0f);
      std::vector<float> v(static_cast<size_t>(n));
      for (float& x : v) x = u(rng);
      return recur::Tensor::from_vector(shape, v);
    }
    case recur::DType::kInt64:  // token ids, lengths: 1 is valid for both
      return recur::Tensor::from_vector(shape, std::vector<int64_t>(static_cast<size_t>(n), 1));
    case recur::DType::kInt32:
      return recur::Tensor::from_vector(shape, std::vector<int32_t>(static_cast<size_t>(n), 1));
    default:
      throw std::runtime_error("input '" + info.name + "': the example feeds float32, int32 " +
                               "and int64 only, not " + std::string(recur::dtype_name(info.dtype)));
  }
}

void print(const std::string& name, const recur::Tensor& t) {
  std::cout << name << ": " << recur::dtype_name(t.dtype()) << " "
            << recur::shape_to_string(t.shape());
  if (t.dtype() == recur::DType::kFloat32) {
    const float* p = t.data<float>();
    std::cout << " [";
    for (int64_t i = 0; i < t.numel() && i < 4; ++i) std::cout << (i ? ", " : "") << p[i];
    std::cout << (t.numel() > 4 ? ", ...]" : "]");
  }
  std::cout << "\n";
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::cerr << "usage: " << argv[0] << " MODEL.onnx [SIZE]\n";
    return 2;
  }
  const int64_t size = argc > 2 ? std::atoll(argv[2]) : 3;
  std::cout << "recur " << recur::version() << " (headers " << RECUR_VERSION_STRING << ")\n";
  for (const recur::ProviderInfo& p : recur::list_providers()) {
    std::cout << "provider " << p.name << ": "
              << (p.available ? "available" : "unavailable: " + p.reason) << "\n";
  }
  try {
    recur::Session session(argv[1]);
    std::mt19937 rng(42);
    recur::Feeds feeds;
    for (const recur::ValueInfo& in : session.inputs()) {
      if (in.has_default) continue;
      feeds.emplace_back(in.name, random_input(in, size, rng));
      print("input " + in.name, feeds.back().second);
    }
    const recur::Outputs out = session.run(feeds);
    for (size_t i = 0; i < out.size(); ++i) print("output " + out.name(i), out[i]);
    std::cout << session.explain();
  } catch (const recur::Error& e) {
    std::cerr << "recur error (" << recur::to_string(e.code()) << "): " << e.what() << "\n";
    return 1;
  }
  return 0;
}
