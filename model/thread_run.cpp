#include "model/thread_run.h"

#include "model/recorder.h"
#include "sim/engine/engine.h"

namespace gmp::model {

const char* outcome_name(ThreadRun::Outcome o) {
  switch (o) {
    case ThreadRun::Outcome::Completed:
      return "completed";
    case ThreadRun::Outcome::Deadlock:
      return "deadlock";
    case ThreadRun::Outcome::StepLimit:
      return "step limit";
    case ThreadRun::Outcome::Failed:
      return "failed";
    case ThreadRun::Outcome::Stopped:
      return "stopped";
  }
  return "?";
}

void ThreadProgram::add_thread(std::string name, std::function<void()> fn, rt::g* gp, uint32_t process) {
  auto t = std::make_unique<Thread>();
  t->name = std::move(name);
  t->fn = std::move(fn);
  t->gp = gp;
  t->process = process;
  threads_.push_back(std::move(t));
}

namespace {
void thread_entry(void* arg) { (*static_cast<const std::function<void()>*>(arg))(); }
}  // namespace

ThreadRun ThreadProgram::run(Policy& policy, uint64_t max_steps, uint32_t checked) const {
  ThreadRun out;
  Recorder rec(policy, nullptr, out, checked);
  engine::EngineConfig cfg;
  cfg.cores.assign(1, engine::Core{});  // the engine wants a machine; choice mode ignores it
  cfg.chooser = &rec;
  cfg.event_limit = max_steps;
  engine::Engine e(cfg);
  for (const auto& t : threads_) {
    e.newosproc(t->name, &thread_entry, const_cast<std::function<void()>*>(&t->fn), t->gp, false, t->process);
  }
  const engine::Engine::Result r = e.run();
  using Stop = engine::Engine::Stop;
  switch (r.stop) {
    case Stop::AllExited:
    case Stop::Exit:
      out.outcome = ThreadRun::Outcome::Completed;
      break;
    case Stop::Deadlock:
    case Stop::Livelock:  // plain threads mark no spin loops
      out.outcome = ThreadRun::Outcome::Deadlock;
      out.message = r.message;
      break;
    case Stop::EventLimit:
    case Stop::TimeLimit:
      out.outcome = ThreadRun::Outcome::StepLimit;
      out.message = "no end within " + std::to_string(max_steps) + " steps";
      break;
    case Stop::Fatal:
      out.outcome = ThreadRun::Outcome::Failed;
      out.message = r.message;
      break;
    case Stop::Stopped:
      out.outcome = ThreadRun::Outcome::Stopped;
      out.message = "stopped by the policy";
      break;
  }
  policy.finish(out);
  return out;
}

}  // namespace gmp::model
