//! When bytes really arrived and left: a TCP stream that records, per connection, the kernel's
//! receive timestamp of what it reads and the moment of the write syscall for what it sends.
//!
//! Why: at high concurrency the client (and the mock) are CPU-bound. A chunk that has already
//! arrived in the socket then waits for its task to be scheduled, and an `Instant::now()` taken
//! when the task finally reads it counts that wait as the server's latency — exactly the client
//! queueing that makes Python clients report hundreds of milliseconds of TTFT against a zero-delay
//! server. The kernel stamps every incoming TCP segment when it is received (`SO_TIMESTAMPNS`);
//! reading with `recvmsg` returns the stamp of the last segment consumed, so the time we attach to
//! data is never earlier than its true arrival and never includes user-space queueing.
//!
//! Kernel stamps are wall-clock (`CLOCK_REALTIME`). They are converted to the monotonic
//! [`Instant`] clock by how long ago they were: `Instant::now() − (SystemTime::now() − stamp)`,
//! both clocks read together, so a wall-clock step between runs does not matter.
//!
//! Data without a stamp is timed when the read returns, as on systems without `SO_TIMESTAMPNS`
//! (non-Linux): the kernel switches stamping on asynchronously when the first socket of the
//! system asks for it, so the first segments of a run can come unstamped. [`kernel_stamps`] says which one is in use (it is written into result metadata).

use std::io;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};

use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::TcpStream;
use tokio::time::Instant;

/// What a [`StampedStream`] saw last, shared with the code using the connection.
#[derive(Debug, Default)]
pub struct Stamps {
    /// Arrival of the newest data read so far.
    last_rx: Mutex<Option<Instant>>,
    /// Set by [`Stamps::arm_tx`]: the next write records its time in `tx`.
    armed: AtomicBool,
    tx: Mutex<Option<Instant>>,
    /// Reads that brought data, so far.
    reads: std::sync::atomic::AtomicU64,
}

impl Stamps {
    /// The arrival time of the newest data read from the socket (kernel stamp where available).
    /// Data handed out by a reader on this connection arrived at or before this instant.
    pub fn last_rx(&self) -> Option<Instant> {
        self.last_rx.lock().ok().and_then(|g| *g)
    }

    /// Marks that the next write is the start of something to time (a request, a first chunk).
    pub fn arm_tx(&self) {
        if let Ok(mut g) = self.tx.lock() {
            *g = None;
        }
        self.armed.store(true, Ordering::Release);
    }

    /// When the first write after [`Stamps::arm_tx`] went to the socket, once it has.
    pub fn tx(&self) -> Option<Instant> {
        self.tx.lock().ok().and_then(|g| *g)
    }

    /// How many reads brought data so far: unchanged across a request means not one byte of
    /// an answer came.
    pub fn reads(&self) -> u64 {
        self.reads.load(Ordering::Acquire)
    }

    fn received(&self, at: Instant) {
        self.reads.fetch_add(1, Ordering::AcqRel);
        if let Ok(mut g) = self.last_rx.lock() {
            // Reads on one connection are sequential; keep the newest either way.
            if g.is_none_or(|prev| at > prev) {
                *g = Some(at);
            }
        }
    }

    fn wrote(&self) {
        if self.armed.swap(false, Ordering::AcqRel) {
            if let Ok(mut g) = self.tx.lock() {
                *g = Some(Instant::now());
            }
        }
    }
}

/// Whether reads are stamped by the kernel on this system (else: when the read returns).
pub fn kernel_stamps() -> bool {
    cfg!(target_os = "linux")
}

/// A TCP stream whose reads and writes are timed into a shared [`Stamps`].
#[derive(Debug)]
pub struct StampedStream {
    inner: TcpStream,
    stamps: Arc<Stamps>,
    kernel: bool,
}

impl StampedStream {
    /// Wraps a connected stream and asks the kernel to stamp what it receives.
    pub fn new(inner: TcpStream) -> (StampedStream, Arc<Stamps>) {
        let kernel = enable_rx_stamps(&inner);
        let stamps = Arc::new(Stamps::default());
        (
            StampedStream {
                inner,
                stamps: stamps.clone(),
                kernel,
            },
            stamps,
        )
    }

    /// The wrapped stream (socket options, linger).
    pub fn get_ref(&self) -> &TcpStream {
        &self.inner
    }
}

/// Switches stamping on for a listening socket, so accepted connections carry it from their
/// first segment (a request sent before `accept` returns is stamped too).
pub fn stamp_listener(l: &tokio::net::TcpListener) {
    #[cfg(target_os = "linux")]
    {
        use std::os::fd::AsRawFd;
        set_timestampns(l.as_raw_fd());
    }
    #[cfg(not(target_os = "linux"))]
    let _ = l;
}

#[cfg(target_os = "linux")]
fn enable_rx_stamps(s: &TcpStream) -> bool {
    use std::os::fd::AsRawFd;
    set_timestampns(s.as_raw_fd())
}

#[cfg(target_os = "linux")]
fn set_timestampns(fd: std::os::fd::RawFd) -> bool {
    let on: libc::c_int = 1;
    // SAFETY: a valid socket descriptor, and a c_int option value of the right size.
    let rc = unsafe {
        libc::setsockopt(
            fd,
            libc::SOL_SOCKET,
            libc::SO_TIMESTAMPNS,
            (&on as *const libc::c_int).cast(),
            std::mem::size_of::<libc::c_int>() as libc::socklen_t,
        )
    };
    rc == 0
}

#[cfg(not(target_os = "linux"))]
fn enable_rx_stamps(_: &TcpStream) -> bool {
    false
}

/// Converts a kernel wall-clock stamp into the monotonic clock.
#[cfg(target_os = "linux")]
fn to_instant(sec: i64, nsec: i64) -> Instant {
    let now = Instant::now();
    let wall_now = std::time::SystemTime::now();
    let stamp = std::time::UNIX_EPOCH
        + std::time::Duration::new(
            u64::try_from(sec).unwrap_or(0),
            u32::try_from(nsec).unwrap_or(0),
        );
    // A stamp "in the future" (clock stepped) counts as now.
    let ago = wall_now.duration_since(stamp).unwrap_or_default();
    now.checked_sub(ago).unwrap_or(now)
}

/// One `recvmsg` into `buf`: bytes read and the kernel stamp of the last segment consumed.
#[cfg(target_os = "linux")]
fn recv_stamped(
    fd: std::os::fd::RawFd,
    buf: &mut [std::mem::MaybeUninit<u8>],
) -> io::Result<(usize, Option<Instant>)> {
    let mut iov = libc::iovec {
        iov_base: buf.as_mut_ptr().cast(),
        iov_len: buf.len(),
    };
    // Room for one SCM_TIMESTAMPNS (a timespec) and then some, 8-byte aligned.
    let mut control = [0u64; 8];
    // SAFETY: zeroed msghdr is a valid "no name, no flags" header; the fields set below point at
    // live buffers of the stated lengths for the duration of the call.
    let mut msg: libc::msghdr = unsafe { std::mem::zeroed() };
    msg.msg_iov = &mut iov;
    msg.msg_iovlen = 1;
    msg.msg_control = control.as_mut_ptr().cast();
    msg.msg_controllen = std::mem::size_of_val(&control) as _;
    // SAFETY: `fd` is an open socket; `msg` describes writable memory owned by this frame.
    let n = unsafe { libc::recvmsg(fd, &mut msg, 0) };
    if n < 0 {
        return Err(io::Error::last_os_error());
    }
    let mut stamp = None;
    // SAFETY: the CMSG_* walkers only read within `msg.msg_control`/`msg_controllen`, which the
    // kernel filled; the timespec is read unaligned from a header of the matching type.
    unsafe {
        let mut c = libc::CMSG_FIRSTHDR(&msg);
        while !c.is_null() {
            if (*c).cmsg_level == libc::SOL_SOCKET && (*c).cmsg_type == libc::SCM_TIMESTAMPNS {
                let ts: libc::timespec = std::ptr::read_unaligned(libc::CMSG_DATA(c).cast());
                stamp = Some(to_instant(ts.tv_sec, ts.tv_nsec));
            }
            c = libc::CMSG_NXTHDR(&msg, c);
        }
    }
    Ok((n as usize, stamp))
}

impl AsyncRead for StampedStream {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        #[cfg(target_os = "linux")]
        if this.kernel {
            use std::os::fd::AsRawFd;
            let fd = this.inner.as_raw_fd();
            loop {
                std::task::ready!(this.inner.poll_read_ready(cx))?;
                // SAFETY (assume_init below): recvmsg initialised the first `n` bytes.
                let unfilled = unsafe { buf.unfilled_mut() };
                match this
                    .inner
                    .try_io(tokio::io::Interest::READABLE, || recv_stamped(fd, unfilled))
                {
                    Ok((n, stamp)) => {
                        if n > 0 {
                            this.stamps.received(stamp.unwrap_or_else(Instant::now));
                        }
                        // SAFETY: see above.
                        unsafe { buf.assume_init(n) };
                        buf.advance(n);
                        return Poll::Ready(Ok(()));
                    }
                    Err(e) if e.kind() == io::ErrorKind::WouldBlock => continue,
                    Err(e) => return Poll::Ready(Err(e)),
                }
            }
        }
        let before = buf.filled().len();
        let r = Pin::new(&mut this.inner).poll_read(cx, buf);
        if matches!(r, Poll::Ready(Ok(()))) && buf.filled().len() > before {
            this.stamps.received(Instant::now());
        }
        r
    }
}

impl AsyncWrite for StampedStream {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        let this = self.get_mut();
        let r = Pin::new(&mut this.inner).poll_write(cx, buf);
        if matches!(r, Poll::Ready(Ok(n)) if n > 0) {
            this.stamps.wrote();
        }
        r
    }

    fn poll_write_vectored(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        let this = self.get_mut();
        let r = Pin::new(&mut this.inner).poll_write_vectored(cx, bufs);
        if matches!(r, Poll::Ready(Ok(n)) if n > 0) {
            this.stamps.wrote();
        }
        r
    }

    fn is_write_vectored(&self) -> bool {
        self.inner.is_write_vectored()
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.get_mut().inner).poll_flush(cx)
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.get_mut().inner).poll_shutdown(cx)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;
    use tokio::io::{AsyncReadExt, AsyncWriteExt};

    #[tokio::test]
    async fn data_is_stamped_when_it_arrived_not_when_it_was_read() {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let (go, wait) = tokio::sync::oneshot::channel::<()>();
        let server = tokio::spawn(async move {
            let (mut s, _) = listener.accept().await.unwrap();
            // Only segments received after stamping is switched on carry a stamp.
            wait.await.unwrap();
            s.write_all(b"hello").await.unwrap();
            s
        });
        let (mut client, stamps) = StampedStream::new(TcpStream::connect(addr).await.unwrap());
        // The kernel switches stamping on asynchronously when the first socket asks for it.
        std::thread::sleep(Duration::from_millis(20));
        go.send(()).unwrap();
        let _server_side = server.await.unwrap();
        let written = Instant::now();
        // The bytes sit in the socket while this task is busy elsewhere.
        std::thread::sleep(Duration::from_millis(60));
        let mut buf = [0u8; 16];
        let n = client.read(&mut buf).await.unwrap();
        let read_at = Instant::now();
        assert_eq!(&buf[..n], b"hello");
        let rx = stamps.last_rx().expect("a stamp");
        if kernel_stamps() {
            // The kernel stamp is from before the 60 ms wait, not from the read.
            assert!(
                read_at - rx >= Duration::from_millis(50),
                "{:?}",
                read_at - rx
            );
            assert!(rx <= written + Duration::from_millis(5));
        } else {
            assert!(rx >= written);
        }
    }

    #[tokio::test]
    async fn the_first_write_after_arming_is_timed() {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let accept = tokio::spawn(async move { listener.accept().await.unwrap().0 });
        let (mut client, stamps) = StampedStream::new(TcpStream::connect(addr).await.unwrap());
        let _peer = accept.await.unwrap();
        client.write_all(b"unarmed").await.unwrap();
        assert_eq!(stamps.tx(), None);
        stamps.arm_tx();
        let before = Instant::now();
        client.write_all(b"armed").await.unwrap();
        let t1 = stamps.tx().expect("timed");
        assert!(t1 >= before);
        client.write_all(b"later").await.unwrap();
        assert_eq!(stamps.tx(), Some(t1), "only the first write after arming");
    }
}
