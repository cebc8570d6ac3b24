"""Overlapping communication with computation on CUDA streams, as the frameworks do it.

Each pattern has a correct version and one without the wait that orders it;
on a GPU the second computes wrong values only when the streams happen to
run in the wrong order. Every ``# (line)`` comment names a line the tests
look for in the race report.
"""

import time

import torch
import torch.distributed as dist


def _side_stream_all_reduce(rank, world_size, wait):
    """A side stream computes what the default stream then all-reduces, while the default stream works on."""
    dist.init_process_group("nccl")
    side = torch.cuda.Stream()
    x = torch.ones(4, device="cuda")
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        y = x * (rank + 1)  # (side compute)
    norm = x.norm()  # overlaps the side stream
    if wait:
        torch.cuda.current_stream().wait_stream(side)
    dist.all_reduce(y)  # (all-reduce)
    assert y.sum().item() == 4 * sum(range(1, world_size + 1)) and norm.item() == 2


def side_stream_all_reduce(rank, world_size):
    _side_stream_all_reduce(rank, world_size, wait=True)


def side_stream_all_reduce_without_wait(rank, world_size):
    _side_stream_all_reduce(rank, world_size, wait=False)


def _ddp_overlap(rank, world_size, wait):
    """DDP/FSDP: gradients are all-reduced on a communication stream while the default stream computes on."""
    dist.init_process_group("nccl")
    torch.cuda.set_device(rank)
    comm = torch.cuda.Stream()
    grads = [torch.full((4,), float(rank + i), device="cuda") for i in range(2)]
    comm.wait_stream(torch.cuda.current_stream())  # the gradients are ready before the stream reads them
    with torch.cuda.stream(comm):
        works = [dist.all_reduce(grad, async_op=True) for grad in grads]  # (all_reduce)
        for work in works:
            work.wait()  # the communication stream waits for NCCL
        reduced = torch.cuda.Event()
        reduced.record()
    activation = torch.ones(4, device="cuda") * 3  # overlaps the reductions
    if wait:
        torch.cuda.current_stream().wait_event(reduced)
    total = grads[0].sum() + grads[1].sum() + activation.sum()  # (read)
    ranks = sum(range(world_size))
    assert total.item() == 4 * (2 * ranks + world_size) + 12


def ddp_overlap(rank, world_size):
    _ddp_overlap(rank, world_size, wait=True)


def ddp_overlap_without_wait(rank, world_size):
    _ddp_overlap(rank, world_size, wait=False)


def _reduction_stream(rank, world_size, wait):
    """DeepSpeed's overlap_comm: gradients are copied to a reduction stream, all-reduced there, copied back."""
    dist.init_process_group("nccl")
    reduction = torch.cuda.Stream()
    param = torch.ones(4, device="cuda")
    grad = param * (rank + 1)  # backward, on the default stream
    reduction.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(reduction):
        bucket = grad.clone()
        dist.all_reduce(bucket)
        bucket.div_(world_size)
        grad.copy_(bucket)  # (copy back)
        bucket.record_stream(reduction)
    if wait:
        torch.cuda.current_stream().wait_stream(reduction)
    param.sub_(grad * 0.5)  # (optimizer)
    mean = sum(range(1, world_size + 1)) / world_size
    assert torch.allclose(param, torch.full((4,), 1 - 0.5 * mean))


def reduction_stream(rank, world_size):
    _reduction_stream(rank, world_size, wait=True)


def reduction_stream_without_wait(rank, world_size):
    _reduction_stream(rank, world_size, wait=False)


def _async_all_gather(rank, world_size, wait):
    """Megatron's async tensor parallelism: the next weights are all-gathered on a side stream during compute."""
    dist.init_process_group("nccl")
    comm = torch.cuda.Stream()
    shard = torch.full((2,), float(rank), device="cuda")
    gathered = torch.empty(2 * world_size, device="cuda")
    comm.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(comm):
        handle = dist.all_gather_into_tensor(gathered, shard, async_op=True)  # (all_gather)
    local = (shard * 2).sum()  # overlaps the all-gather
    with torch.cuda.stream(comm):
        handle.wait()
    if wait:
        torch.cuda.current_stream().wait_stream(comm)
    out = (gathered * torch.ones(2 * world_size, device="cuda")).sum() + local  # (use)
    assert out.item() == 2 * sum(range(world_size)) + 4 * rank


def async_all_gather(rank, world_size):
    _async_all_gather(rank, world_size, wait=True)


def async_all_gather_without_wait(rank, world_size):
    _async_all_gather(rank, world_size, wait=False)


def _host_read(rank, world_size, synchronize):
    """A side stream's result read on the host: correct only after the host synchronized with the stream."""
    side = torch.cuda.Stream()
    x = torch.arange(4.0, device="cuda")
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        y = x * 2  # (side)
    if synchronize:
        side.synchronize()
    assert y.tolist() == [0.0, 2.0, 4.0, 6.0]  # (host)


def host_read(rank, world_size):
    _host_read(rank, world_size, synchronize=True)


def host_read_without_synchronize(rank, world_size):
    _host_read(rank, world_size, synchronize=False)


def _poll(rank, world_size, until_done):
    """The host polls an event before it reads: correct only when it polls until the event completed."""
    side = torch.cuda.Stream()
    x = torch.ones(4, device="cuda")
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        y = x * 2  # (polled)
    done = side.record_event()
    if until_done:
        while not done.query():
            pass
    elif not done.query():
        time.sleep(0.01)  # "long enough" for the stream: nothing orders the read after it
    assert y.sum().item() == 8  # (after poll)


def poll_until_done(rank, world_size):
    _poll(rank, world_size, until_done=True)


def poll_once(rank, world_size):
    _poll(rank, world_size, until_done=False)


def host_reads_after_each_synchronization(rank, world_size):
    """Each way the host can wait for a stream orders its later reads: the stream, an event, the device."""
    side = torch.cuda.Stream()
    x = torch.arange(4.0, device="cuda")
    for how in ("stream", "event", "device", "event wait"):
        side.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(side):
            x = x + 1
            done = torch.cuda.Event()
            done.record()
        if how == "stream":
            side.synchronize()
        elif how == "event":
            done.synchronize()
        elif how == "device":
            torch.cuda.synchronize()
        else:
            done.wait()  # the host's current stream waits, and reads on it
    assert x.tolist() == [4.0, 5.0, 6.0, 7.0]


def never_waited_for_the_default_stream(rank, world_size):
    """A new stream is not ordered after the default stream: it reads x before x's kernel ran."""
    x = torch.ones(4, device="cuda") * rank
    side = torch.cuda.Stream()
    with torch.cuda.stream(side):
        y = x + 1  # (unordered)
    side.synchronize()
    assert y.sum().item() == 4 * (rank + 1)


def device_queries(rank, world_size):
    """What the virtual device says about itself inside a rank."""
    torch.cuda.set_device(rank)
    assert torch.cuda.is_available()
    assert torch.cuda.device_count() == world_size
    assert torch.cuda.current_device() == rank
    with torch.cuda.device(world_size - 1 - rank):
        assert torch.cuda.current_device() == world_size - 1 - rank
    assert torch.cuda.current_device() == rank
    state = torch.cuda.get_rng_state()
    first = torch.randn(2, device="cuda")
    torch.cuda.set_rng_state(state)
    assert torch.equal(first, torch.randn(2, device="cuda"))
    generator = torch.Generator(device="cuda").manual_seed(7)
    assert isinstance(generator, torch.Generator)
    assert torch.randn(2, device="cuda", generator=generator).shape == (2,)
    assert torch.cuda.get_device_capability() == (9, 0)
    assert "virtual" in torch.cuda.get_device_name(rank)
    assert torch.cuda.get_device_properties(rank).total_memory == 80 * 1024**3
    free, total = torch.cuda.mem_get_info()
    assert free == total == 80 * 1024**3
    assert torch.cuda.memory_allocated() == torch.cuda.max_memory_allocated() == torch.cuda.memory_reserved() == 0
    torch.cuda.reset_peak_memory_stats()
    torch.cuda.empty_cache()
    assert torch.cuda.memory_stats() == {}
    assert torch.cuda.nvtx.range_push("step") == 0
    with torch.cuda.nvtx.range("inner"):
        torch.cuda.nvtx.mark("here")
    torch.cuda.nvtx.range_pop()
    torch.backends.cuda.matmul.allow_tf32 = True
    assert torch.backends.cuda.matmul.allow_tf32
    main = torch.cuda.current_stream()
    assert main == torch.cuda.default_stream() and main.cuda_stream == 0
    side = torch.cuda.Stream(priority=-1)
    assert side != main
    with torch.cuda.stream(side):
        assert torch.cuda.current_stream() == side
    assert torch.cuda.current_stream() == main
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    start.record(side)
    with torch.cuda.stream(side):
        y = torch.ones(3, device="cuda").pin_memory() * 2
    end.record(side)
    while not end.query():  # the stream finishes at a step the scheduler chooses
        pass
    assert end.elapsed_time(start) <= 0 <= start.elapsed_time(end)
    torch.cuda.synchronize()
    assert side.query()
    with torch.autocast("cuda", dtype=torch.bfloat16):
        assert y.sum().item() == 6
    with torch.cuda.amp.autocast():
        assert torch.is_autocast_enabled("cuda")
    scaler = torch.amp.GradScaler("cuda")
    assert scaler.is_enabled()
    weight = torch.ones(2, device="cuda", requires_grad=True)
    optimizer = torch.optim.SGD([weight], lr=0.1)
    scaler.scale((weight * 2).sum()).backward()
    scaler.step(optimizer)
    scaler.update()
    assert torch.allclose(weight.detach(), torch.full((2,), 0.8))


def cuda_graph(rank, world_size):
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        torch.ones(2, device="cuda")


def custom_kernel(rank, world_size):
    from torch.utils.cpp_extension import load_inline

    load_inline("scale", cpp_sources="", cuda_sources="__global__ void scale(float* x) { x[0] *= 2; }")


def external_stream(rank, world_size):
    torch.cuda.ExternalStream(1234)


def interprocess_event(rank, world_size):
    torch.cuda.Event(interprocess=True)


def _pipeline_send(rank, world_size, wait):
    """Pipeline parallelism: an activation computed on a side stream is sent to the next stage."""
    dist.init_process_group("nccl")
    compute = torch.cuda.Stream()
    x = torch.full((4,), float(rank + 1), device="cuda")
    compute.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(compute):
        activation = x * 2  # (activation)
    if wait:
        torch.cuda.current_stream().wait_stream(compute)
    if rank == 0:
        dist.send(activation, dst=1)  # (send)
    else:
        received = torch.empty(4, device="cuda")
        dist.recv(received, src=0)
        assert received.sum().item() == 8


def pipeline_send(rank, world_size):
    _pipeline_send(rank, world_size, wait=True)


def pipeline_send_without_wait(rank, world_size):
    _pipeline_send(rank, world_size, wait=False)


def _prefetch(rank, world_size, wait):
    """The next batch is copied to the device on a side stream while the current one trains (apex's prefetcher)."""
    dist.init_process_group("nccl")
    torch.manual_seed(rank)
    model = torch.nn.Linear(4, 2).cuda()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    copies = torch.cuda.Stream()
    batches = [torch.randn(3, 4) for _ in range(3)]  # host memory
    with torch.cuda.stream(copies):
        upcoming = batches[0].cuda(non_blocking=True).float()  # (prefetch)
    for step in range(3):
        if wait:
            torch.cuda.current_stream().wait_stream(copies)
        batch = upcoming
        batch.record_stream(torch.cuda.current_stream())
        if step + 1 < len(batches):
            copies.wait_stream(torch.cuda.current_stream())
            with torch.cuda.stream(copies):
                upcoming = (batches[step + 1].cuda(non_blocking=True) * 1.0).float()  # (prefetch next)
        loss = model(batch).sum()  # (train)
        optimizer.zero_grad()
        loss.backward()
        for parameter in model.parameters():
            dist.all_reduce(parameter.grad)
        optimizer.step()


def prefetch(rank, world_size):
    _prefetch(rank, world_size, wait=True)


def prefetch_without_wait(rank, world_size):
    _prefetch(rank, world_size, wait=False)
